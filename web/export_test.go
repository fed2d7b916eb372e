package web

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/flipzero/flipzero/env/games"
	"github.com/flipzero/flipzero/env/tictactoe"
	"github.com/flipzero/flipzero/mcts"
	"github.com/flipzero/flipzero/nn"
	"github.com/flipzero/flipzero/web/internal/bundle"
	"github.com/flipzero/flipzero/web/play"
)

// fakeBundle is a bundle folder of placeholder files, every other one
// gzipped as the binary embeds them; with only, just those files.
func fakeBundle(t *testing.T, only ...string) string {
	t.Helper()
	dir := t.TempDir()
	for i, name := range bundle.Files() {
		if len(only) > 0 && !slices.Contains(only, name) {
			continue
		}
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		content := []byte("the bundle's " + name)
		if i%2 == 1 {
			var buf bytes.Buffer
			zw := gzip.NewWriter(&buf)
			zw.Write(content)
			zw.Close()
			p, content = p+".gz", buf.Bytes()
		}
		if err := os.WriteFile(p, content, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// renamed is tic-tac-toe under a name the built-in games lack: a
// program's own game.
type renamed struct{ tictactoe.Game }

func (renamed) Name() string { return "noughts" }

// TestExportRefuses: Export checks the bundle, the game and the folder
// before writing anything.
func TestExportRefuses(t *testing.T) {
	net, err := nn.New(tictactoe.Game{}, nn.Config{Blocks: 1, Filters: 4, PolicyFilters: 1, ValueFilters: 1, ValueHidden: 4}, 1)
	if err != nil {
		t.Fatal(err)
	}
	own, err := nn.New(renamed{}, nn.Config{Blocks: 1, Filters: 4, PolicyFilters: 1, ValueFilters: 1, ValueHidden: 4}, 1)
	if err != nil {
		t.Fatal(err)
	}
	opts := ExportOptions{Strength: play.Strength{Playouts: 10}, Search: mcts.PlayConfig()}
	complete := fakeBundle(t)
	occupied := t.TempDir()
	os.WriteFile(filepath.Join(occupied, "index.html"), []byte("someone's page"), 0o644)
	tests := []struct {
		name   string
		net    *nn.Network
		dir    string
		bundle string
		opts   ExportOptions
		says   string
	}{
		{"incomplete bundle", net, "", fakeBundle(t, bundle.Engine), opts, "the bundle has no " + bundle.WasmExec},
		{"a program's own game", own, "", complete, opts, "the page's engine plays the built-in games"},
		{"no playouts", net, "", complete, ExportOptions{Search: mcts.PlayConfig()}, "strength"},
		{"bad search", net, "", complete, ExportOptions{Strength: play.Strength{Playouts: 5}}, "search"},
		{"bad side", net, "", complete, ExportOptions{Strength: play.Strength{Playouts: 5}, Search: mcts.PlayConfig(), Human: "green"}, "human"},
		{"occupied folder", net, occupied, complete, opts, "holds other files (index.html)"},
	}
	for _, tt := range tests {
		dir := tt.dir
		if dir == "" {
			dir = filepath.Join(t.TempDir(), "page")
		}
		_, err := Export(dir, ExportModel{Network: tt.net.Fold()}, tt.opts, os.DirFS(tt.bundle))
		if err == nil || !strings.Contains(err.Error(), tt.says) {
			t.Errorf("%s: %v, want an error saying %q", tt.name, err, tt.says)
		}
		if tt.dir == "" {
			if _, err := os.Stat(dir); err == nil {
				t.Errorf("%s: the refused export made %s", tt.name, dir)
			}
		}
	}
	if b, _ := os.ReadFile(filepath.Join(occupied, "index.html")); string(b) != "someone's page" {
		t.Errorf("the occupied folder's file now holds %q", b)
	}
}

// TestExportWrites: an export holds the page's files, page.json, the
// model, and the bundle's files, the gzipped ones unzipped; a second
// export over it replaces them.
func TestExportWrites(t *testing.T) {
	net, err := nn.New(tictactoe.Game{}, nn.Config{Blocks: 1, Filters: 4, PolicyFilters: 1, ValueFilters: 1, ValueHidden: 4}, 1)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "page")
	layers := net.Fold().Layers()
	m := ExportModel{Network: net.Fold(), Steps: 12, Metadata: map[string]string{"generation": "2", "trained": "2025-05-04T03:02:01Z"}}
	for range 2 {
		done, err := Export(dir, m, ExportOptions{Strength: play.Strength{Seconds: 2}, Search: mcts.PlayConfig()}, os.DirFS(fakeBundle(t)))
		if err != nil {
			t.Fatal(err)
		}
		if len(done.Files) != len(exportedPageFiles())+2+len(bundle.Files()) {
			t.Errorf("wrote %v", done.Files)
		}
		n := done.Page.Network
		if n == nil || n.Generation != "2" || n.Steps != 12 || n.Created != "2025-05-04T03:02:01Z" || n.Parameters != int64(layers.Parameters()) {
			t.Errorf("the page says the network is %+v", n)
		}
	}
	for _, name := range bundle.Files() {
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
		if err != nil || string(b) != "the bundle's "+name {
			t.Errorf("%s holds %q (%v)", name, b, err)
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, play.PageFile))
	if err != nil {
		t.Fatal(err)
	}
	p, g, err := play.ReadPage(b, games.Builtin())
	if err != nil || g.Name() != "tictactoe" || p.Strength.Seconds != 2 || p.Model != "model.onnx" {
		t.Errorf("page.json %s: %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "model.onnx")); err != nil {
		t.Error(err)
	}
}
