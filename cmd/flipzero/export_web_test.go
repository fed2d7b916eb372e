package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flipzero/flipzero/env/tictactoe"
	"github.com/flipzero/flipzero/loop"
	"github.com/flipzero/flipzero/nn"
	"github.com/flipzero/flipzero/nn/cpu"
	"github.com/flipzero/flipzero/nn/onnx"
	"github.com/flipzero/flipzero/web"
	"github.com/flipzero/flipzero/web/play"
)

// webModel writes a small model of tic-tac-toe.
func webModel(t *testing.T) string {
	t.Helper()
	c, err := nn.New(tictactoe.Game{}, nn.Config{Blocks: 1, Filters: 8, PolicyFilters: 2, ValueFilters: 1, ValueHidden: 8}, 1)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "ttt.fznet")
	if err := nn.SaveFolded(path, c.Fold(), 40, map[string]string{"generation": "3"}); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestExportWebRefuses: a damaged model, a model of a game this
// flipzero does not play, and bad flags are each refused with exit
// status 2 and one line naming what was wrong, and nothing is written.
func TestExportWebRefuses(t *testing.T) {
	dir := t.TempDir()
	good := webModel(t)
	raw, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	truncated := write("truncated.fznet", raw[:len(raw)/2])
	flipped := append([]byte(nil), raw...)
	flipped[len(flipped)-40] ^= 0xff
	damaged := write("damaged.fznet", flipped)
	garbage := write("garbage.fznet", []byte("not a network at all"))
	// A network of a game the binary does not have (a plug-in game).
	nimNet, err := nn.New(nim{}, nn.Config{Blocks: 1, Filters: 4, PolicyFilters: 1, ValueFilters: 1, ValueHidden: 4}, 1)
	if err != nil {
		t.Fatal(err)
	}
	nimModel := filepath.Join(dir, "nim.fznet")
	if err := nn.SaveFolded(nimModel, nimNet.Fold(), 0, nil); err != nil {
		t.Fatal(err)
	}
	occupied := t.TempDir()
	keep := filepath.Join(occupied, "notes.txt")
	if err := os.WriteFile(keep, []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "page")
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--model", truncated}, "truncated.fznet"},
		{[]string{"--model", damaged}, "damaged.fznet"},
		{[]string{"--model", garbage}, "garbage.fznet"},
		{[]string{"--model", filepath.Join(dir, "missing.fznet")}, "missing.fznet"},
		{[]string{"--model", nimModel}, "nim"},
		{[]string{"--model", good, "--out", filepath.Join(dir, "m.fznet")}, "--web writes a folder"},
		{[]string{"--model", good, "--run", dir}, "not both"},
		{[]string{}, "--web needs --model FILE or --run DIR"},
		{[]string{"--model", good, "--checkpoint", "3"}, "--checkpoint"},
		{[]string{"--model", good, "--playouts", "0"}, "--playouts"},
		{[]string{"--model", good, "--seconds", "-1"}, "--seconds"},
		{[]string{"--model", good, "--search", "cpucct: 2"}, "cpucct"},
		{[]string{"--model", good, "--as", "purple"}, "purple"},
		{[]string{"--run", filepath.Join(dir, "norun")}, "norun"},
	}
	for _, tt := range tests {
		args := append([]string{"export", "--web", out}, tt.args...)
		code, stdout, stderr := runCLI(t, "", args...)
		if code != 2 || !strings.Contains(stderr, tt.want) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("%v: exit %d, stderr %q, want 2 and one line naming %q (stdout %q)", args[3:], code, stderr, tt.want, stdout)
		}
		if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%v: a refused export wrote %s", args[3:], out)
		}
	}
	// A folder with someone's files in it is not written over, whatever
	// the model.
	code, _, stderr := runCLI(t, "", "export", "--web", occupied, "--model", good)
	if code != 2 || !strings.Contains(stderr, "--web: "+occupied+" holds other files (notes.txt)") {
		t.Errorf("export into a folder with other files: exit %d, %q", code, stderr)
	}
	if b, err := os.ReadFile(keep); err != nil || string(b) != "mine" {
		t.Errorf("the folder's own file after a refused export: %q, %v", b, err)
	}
}

// TestExportWeb exports a model and a run's generation as pages: with
// the page's engine built in (go generate ./web, as CI runs before the
// tests), the folder holds the page, page.json saying what plays and
// how, the network as ONNX, the engine and ONNX Runtime Web; without it,
// the export says how to build it. (web's browser tests play the pages.)
func TestExportWeb(t *testing.T) {
	model := webModel(t)
	out := filepath.Join(t.TempDir(), "page")
	code, stdout, stderr := runCLI(t, "", "export", "--web", out, "--model", model, "--playouts", "60", "--search", "mode: gumbel", "--as", "white")
	if _, err := web.EmbeddedBundle(); err != nil {
		if code != 1 || !strings.Contains(stderr, "go generate ./web") {
			t.Fatalf("without the page's engine built in: exit %d, %q; want 1 and how to build it", code, stderr)
		}
		t.Logf("this flipzero has no page engine built in (go generate ./web): checked the message only")
		return
	}
	if code != 0 || !strings.Contains(stdout, "wrote "+out) || !strings.Contains(stdout, "60 playouts a move") {
		t.Fatalf("export --web: exit %d: %s%s", code, stdout, stderr)
	}
	for _, f := range []string{"index.html", "app.js", "board.js", "style.css", "engine.js", "page.json", "model.onnx",
		"flipzero.wasm", "wasm_exec.js", "ort/ort.wasm.min.mjs", "ort/ort-wasm-simd-threaded.mjs", "ort/ort-wasm-simd-threaded.wasm"} {
		if st, err := os.Stat(filepath.Join(out, f)); err != nil || st.Size() == 0 {
			t.Errorf("the page has no %s (%v)", f, err)
		}
	}
	var page play.Page
	b, _ := os.ReadFile(filepath.Join(out, "page.json"))
	if err := json.Unmarshal(b, &page); err != nil {
		t.Fatal(err)
	}
	if page.Engine != play.EnginePage || page.Game != "tictactoe" || page.Strength.Playouts != 60 || page.Search.Mode.String() != "gumbel" ||
		page.Human != "white" || page.Network == nil || page.Network.Generation != "3" || page.Network.Steps != 40 {
		t.Errorf("page.json %s", b)
	}
	info, err := onnx.ReadInfo(filepath.Join(out, "model.onnx"))
	if err != nil || info.Metadata["game"] != "tictactoe" || info.Metadata["generation"] != "3" {
		t.Errorf("model.onnx: %+v, %v", info.Metadata, err)
	}
	// Again into the same folder: an earlier export is replaced.
	if code, _, stderr := runCLI(t, "", "export", "--web", out, "--model", model); code != 0 {
		t.Errorf("export over an earlier export: exit %d, %s", code, stderr)
	}

	// A run's newest generation.
	run := filepath.Join(t.TempDir(), "run")
	if err := loop.Loop(context.Background(), loop.LoopOptions{Backend: cpu.Backend(),
		ConfigPath: tinyRunConfig(t, 24), RunDir: run, MaxGenerations: 1, Seed: 5}); err != nil {
		t.Fatal(err)
	}
	fromRun := filepath.Join(t.TempDir(), "run-page")
	if code, stdout, stderr := runCLI(t, "", "export", "--web", fromRun, "--run", run); code != 0 || !strings.Contains(stdout, "generation 1") {
		t.Fatalf("export --web --run: exit %d: %s%s", code, stdout, stderr)
	}
}
