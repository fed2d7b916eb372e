package player

import (
	"context"
	"fmt"
	"strings"

	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/gtp"
)

// GTPPlayer is an outside engine that speaks the Go Text Protocol on its
// standard input and output, started once per concurrent game from
// command, a program and its arguments split as a shell would (single and
// double quotes group words). The engine is told every move with "play"
// and asked for its own with "genmove".
func GTPPlayer(command string) (Player, error) {
	argv, err := gtp.SplitCommand(command)
	if err != nil {
		return nil, fmt.Errorf("player gtp:%s: %w", command, err)
	}
	if len(argv) == 0 {
		return nil, fmt.Errorf("player gtp: no command to run")
	}
	return simplePlayer{
		name: "gtp:" + strings.Join(argv, " "),
		newPlayer: func(g env.Game, _ uint64) (Mover, error) {
			c, err := gtp.Start(g, argv, gtp.StartWait)
			if err != nil {
				return nil, err
			}
			return gtpClient{c}, nil
		},
	}, nil
}

// gtpClient turns the engine's resignation into the arena's.
type gtpClient struct{ *gtp.Client }

func (c gtpClient) Move(ctx context.Context, s env.State) (int, error) {
	a, err := c.Client.Move(ctx, s)
	if err == nil && a == gtp.Resign {
		return Resign, nil
	}
	return a, err
}
