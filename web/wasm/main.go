//go:build js && wasm

// Command wasm is the engine of an exported page, compiled to
// WebAssembly (GOOS=js GOARCH=wasm) as flipzero.wasm: the game's rules,
// the search and the player of "flipzero serve", answering the page's
// requests (package play) inside the browser. The network runs outside
// it, in ONNX Runtime Web, which the page's engine.js hands in as a
// function; its WebAssembly SIMD kernels evaluate positions many times
// faster than Go's WebAssembly, which has neither SIMD nor threads.
//
// engine.js sets globalThis.flipzeroBoot before running the module:
//
//	page      the text of page.json
//	evaluate  (input Float32Array, count) → Promise of {policy, wdl}, Float32Arrays
//	ready     called with request(method, path, body) → Promise of {status, body}
//	failed    called with a message when the engine cannot start
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"unsafe"

	"syscall/js"

	"github.com/flipzero/flipzero/env/games"
	"github.com/flipzero/flipzero/web/play"
)

func main() {
	boot := js.Global().Get("flipzeroBoot")
	if boot.IsUndefined() {
		fmt.Println("flipzero.wasm: no globalThis.flipzeroBoot; engine.js starts this module")
		return
	}
	s, err := start(boot)
	if err != nil {
		boot.Call("failed", err.Error())
		return
	}
	request := js.FuncOf(func(this js.Value, args []js.Value) any {
		if len(args) != 3 {
			return rejected("request(method, path, body) takes three arguments")
		}
		method, path, body := args[0].String(), args[1].String(), args[2].String()
		return promise(func() (any, error) {
			a := s.Do(context.Background(), method, path, []byte(body))
			raw, err := json.Marshal(a.Body)
			if err != nil {
				return nil, err
			}
			return map[string]any{"status": a.Status, "body": string(raw)}, nil
		})
	})
	measureGoNetwork()
	boot.Call("ready", request)
	// The module answers requests for as long as the page lives.
	select {}
}

// start reads the page's description and starts its game.
func start(boot js.Value) (*play.Session, error) {
	p, g, err := play.ReadPage([]byte(boot.Get("page").String()), games.Builtin())
	if err != nil {
		return nil, err
	}
	planes, h, w := g.EncodedShape()
	inf := &jsInference{
		evaluate: boot.Get("evaluate"),
		size:     planes * h * w, actions: g.ActionSpace(), maxBatch: p.Search.LeavesPerTree,
		done:      make(chan jsResult, 1),
		uint8View: js.Global().Get("Uint8Array"),
	}
	inf.input = js.Global().Get("Float32Array").New(inf.maxBatch * inf.size)
	inf.inputBytes = inf.byteView(inf.input)
	inf.onResult = js.FuncOf(func(this js.Value, args []js.Value) any {
		inf.done <- jsResult{value: args[0]}
		return nil
	})
	inf.onError = js.FuncOf(func(this js.Value, args []js.Value) any {
		inf.done <- jsResult{err: errors.New(jsMessage(args[0]))}
		return nil
	})
	inf.logits = make([]float32, inf.maxBatch*inf.actions)
	inf.wdl = make([]float32, inf.maxBatch*3)
	return play.PageSession(p, g, inf)
}

// jsInference is the network's inference in ONNX Runtime Web, through
// the page's evaluate function: the inputs copied out, the outputs copied
// back.
type jsInference struct {
	evaluate          js.Value
	size, actions     int
	maxBatch          int
	onResult, onError js.Func
	done              chan jsResult
	logits, wdl       []float32
	// input holds a batch's positions for ONNX Runtime, inputBytes is
	// its bytes; uint8View is the Uint8Array constructor.
	input, inputBytes, uint8View js.Value
}

type jsResult struct {
	value js.Value
	err   error
}

func (j *jsInference) MaxBatch() int { return j.maxBatch }

// Forward hands the batch to evaluate and waits for its promise; the
// goroutine blocks, which gives the browser's event loop back to ONNX
// Runtime until the answer comes.
func (j *jsInference) Forward(inputs []float32, count int) (logits, wdl []float32, err error) {
	if count < 1 || count > j.maxBatch || len(inputs) != count*j.size {
		return nil, nil, fmt.Errorf("forward: %d positions of %d values, want 1 to %d of %d", count, len(inputs), j.maxBatch, j.size)
	}
	js.CopyBytesToJS(j.inputBytes, floatBytes(inputs))
	j.evaluate.Invoke(j.input.Call("subarray", 0, len(inputs)), count).Call("then", j.onResult, j.onError)
	r := <-j.done
	if r.err != nil {
		return nil, nil, fmt.Errorf("onnxruntime: %w", r.err)
	}
	logits, wdl = j.logits[:count*j.actions], j.wdl[:count*3]
	if err := j.copyOut(r.value.Get("policy"), logits, "policy"); err != nil {
		return nil, nil, err
	}
	if err := j.copyOut(r.value.Get("wdl"), wdl, "wdl"); err != nil {
		return nil, nil, err
	}
	return logits, wdl, nil
}

// copyOut copies a Float32Array of the network's output into dst.
func (j *jsInference) copyOut(src js.Value, dst []float32, name string) error {
	if src.Type() != js.TypeObject || src.Get("length").Int() != len(dst) {
		return fmt.Errorf("onnxruntime: output %s holds %v values, want %d", name, src.Get("length"), len(dst))
	}
	js.CopyBytesToGo(floatBytes(dst), j.byteView(src))
	return nil
}

// byteView is a Uint8Array over a typed array's bytes, which
// js.CopyBytesTo* take.
func (j *jsInference) byteView(a js.Value) js.Value {
	return j.uint8View.New(a.Get("buffer"), a.Get("byteOffset"), a.Get("byteLength"))
}

// floatBytes is the memory of f as bytes: WebAssembly is little-endian,
// as a Float32Array is on every browser.
func floatBytes(f []float32) []byte {
	if len(f) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&f[0])), 4*len(f))
}

// promise runs work on a goroutine of its own, so that it may wait for
// JavaScript's promises, and returns a Promise of its result.
func promise(work func() (any, error)) js.Value {
	var executor js.Func
	executor = js.FuncOf(func(this js.Value, args []js.Value) any {
		resolve, reject := args[0], args[1]
		go func() {
			defer executor.Release()
			v, err := work()
			if err != nil {
				reject.Invoke(js.Global().Get("Error").New(err.Error()))
				return
			}
			resolve.Invoke(v)
		}()
		return nil
	})
	return js.Global().Get("Promise").New(executor)
}

func rejected(msg string) js.Value {
	return js.Global().Get("Promise").Call("reject", js.Global().Get("Error").New(msg))
}

// jsMessage is an error thrown in JavaScript as text.
func jsMessage(v js.Value) string {
	if v.Type() == js.TypeObject && v.Get("message").Type() == js.TypeString {
		return v.Get("message").String()
	}
	return js.Global().Get("String").Invoke(v).String()
}
