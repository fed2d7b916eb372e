package loop

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/flipzero/flipzero/env/games"
)

// FuzzParseConfig parses arbitrary text as a run's config, as a cluster
// worker parses the one its trainer sends: nothing may panic, every
// refusal is a ConfigError of one line, and a config accepted is valid.
func FuzzParseConfig(f *testing.F) {
	for _, p := range shippedConfigs(f) {
		raw, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(raw)
	}
	f.Add([]byte("game: othello\nsearch: &a [*a, *a]\n"))
	reg := games.Builtin()
	f.Fuzz(func(t *testing.T, raw []byte) {
		cfg, err := ParseConfig(raw, reg)
		if err != nil {
			var ce ConfigError
			if !errors.As(err, &ce) || strings.ContainsAny(err.Error(), "\r\n") || err.Error() == "" {
				t.Fatalf("refused with %T %q, want a ConfigError of one line", err, err)
			}
			return
		}
		if err := cfg.Validate(); err != nil {
			t.Fatalf("accepted a config that does not validate: %v", err)
		}
	})
}
