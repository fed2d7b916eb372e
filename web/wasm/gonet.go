//go:build js && wasm && flipzero_gonet

package main

import (
	"encoding/json"
	"fmt"
	"syscall/js"
	"time"

	"github.com/flipzero/flipzero/env/games"
	"github.com/flipzero/flipzero/nn"
	"github.com/flipzero/flipzero/nn/cpu"
)

// measureGoNetwork offers the page flipzeroGoNet(game, config, batch,
// milliseconds): the positions a second of flipzero's own CPU network
// compiled to WebAssembly, a random network of the architecture config
// (nn.Config as JSON), at batch. It is what ONNX Runtime Web was chosen
// over; the measurement's build alone has it (-tags flipzero_gonet),
// since it brings the CPU backend's training code, 27 MB of it.
func measureGoNetwork() {
	js.Global().Set("flipzeroGoNet", js.FuncOf(func(this js.Value, args []js.Value) any {
		if len(args) != 4 {
			return rejected("flipzeroGoNet(game, config, batch, milliseconds)")
		}
		game, config, batch, ms := args[0].String(), args[1].String(), args[2].Int(), args[3].Int()
		return promise(func() (any, error) { return goNetRate(game, config, batch, time.Duration(ms)*time.Millisecond) })
	}))
}

func goNetRate(game, config string, batch int, d time.Duration) (any, error) {
	g, err := games.ByName(game)
	if err != nil {
		return nil, err
	}
	var cfg nn.Config
	if err := json.Unmarshal([]byte(config), &cfg); err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	net, err := nn.New(g, cfg, 1)
	if err != nil {
		return nil, err
	}
	inf, err := cpu.Backend().NewInference(net.Fold(), batch)
	if err != nil {
		return nil, err
	}
	p, h, w := g.EncodedShape()
	x := make([]float32, batch*p*h*w)
	for i := range x {
		x[i] = float32(i%3) * 0.5
	}
	inf.Forward(x, batch)
	start := time.Now()
	n := 0
	for time.Since(start) < d {
		if _, _, err := inf.Forward(x, batch); err != nil {
			return nil, err
		}
		n += batch
	}
	return float64(n) / time.Since(start).Seconds(), nil
}
