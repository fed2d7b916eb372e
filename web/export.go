package web

import (
	"bytes"
	"compress/gzip"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/env/games"
	"github.com/flipzero/flipzero/internal/atomicfile"
	"github.com/flipzero/flipzero/mcts"
	"github.com/flipzero/flipzero/nn"
	"github.com/flipzero/flipzero/nn/onnx"
	"github.com/flipzero/flipzero/web/internal/bundle"
	"github.com/flipzero/flipzero/web/play"
)

//go:generate go run ./internal/genbundle

// bundleFiles is what "go generate" built into bundle/ (package
// web/internal/bundle), gzipped: the engine compiled to WebAssembly, Go's
// wasm_exec.js, ONNX Runtime Web. Where it was not run, the folder holds
// only its README, and the binary cannot export pages.
//
//go:embed bundle
var bundleFiles embed.FS

// ErrNoBundle says the binary was built without the exported page's
// engine.
var ErrNoBundle = errors.New("this flipzero was built without the web page's engine: in its source, run " +
	"`npm ci --prefix web/ort` and `go generate ./web`, then build it again (docs/play.md)")

// EmbeddedBundle is the bundle this binary was built with.
func EmbeddedBundle() (fs.FS, error) {
	b, err := fs.Sub(bundleFiles, "bundle")
	if err != nil {
		return nil, err
	}
	if err := checkBundle(b); err != nil {
		return nil, ErrNoBundle
	}
	return b, nil
}

// checkBundle says whether b holds every file of a bundle, plain or
// gzipped.
func checkBundle(b fs.FS) error {
	for _, name := range bundle.Files() {
		if _, err := fs.Stat(b, name); err == nil {
			continue
		}
		if _, err := fs.Stat(b, name+".gz"); err != nil {
			return fmt.Errorf("the bundle has no %s", name)
		}
	}
	return nil
}

// readBundleFile reads a file of the bundle, gunzipping NAME.gz where
// the plain file is absent.
func readBundleFile(b fs.FS, name string) ([]byte, error) {
	if raw, err := fs.ReadFile(b, name); err == nil {
		return raw, nil
	}
	gz, err := fs.ReadFile(b, name+".gz")
	if err != nil {
		return nil, fmt.Errorf("the bundle has no %s", name)
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return nil, fmt.Errorf("the bundle's %s.gz: %w", name, err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("the bundle's %s.gz: %w", name, err)
	}
	return raw, nil
}

// ExportModel is the network an exported page plays and what the page
// says of it.
type ExportModel struct {
	Network *nn.Folded
	Steps   int64
	// Metadata goes into the ONNX model beside the exporter's own keys:
	// "generation", "trained" (RFC 3339) and the rest of a run's model.
	Metadata map[string]string
}

// ExportOptions say how an exported page's engine plays.
type ExportOptions struct {
	Strength play.Strength
	// Search is the search's settings (mcts.PlayConfig and what a
	// --search flag changed).
	Search mcts.Config
	// Human is the person's side in the first game ("" for the first
	// player's).
	Human string
	// Seed fixes the deals of a game with chance events (0: each visit
	// deals anew).
	Seed uint64
	// Version is the flipzero that writes the page.
	Version string
}

// Exported says what Export wrote.
type Exported struct {
	Files []string
	Bytes int64
	Page  play.Page
}

// The page's own files, in static/, that an export copies.
func exportedPageFiles() []string {
	return []string{"index.html", "app.js", "board.js", "style.css", "engine.js"}
}

// modelFile is the ONNX model's name in an exported folder.
const modelFile = "model.onnx"

// Export writes into dir a page that plays m with no server: the play
// page's files, page.json, the network as an ONNX model and the bundle
// (EmbeddedBundle, or one built by web/internal/bundle). Any static file
// server serves the folder as it is. dir must be new, empty, or an
// earlier export, whose files are replaced; every file is written to a
// temporary name and renamed.
func Export(dir string, m ExportModel, o ExportOptions, b fs.FS) (Exported, error) {
	if err := checkBundle(b); err != nil {
		return Exported{}, fmt.Errorf("web page: %w", err)
	}
	g := m.Network.Game()
	page, err := exportPage(g, m, o)
	if err != nil {
		return Exported{}, err
	}
	var model bytes.Buffer
	meta := map[string]string{"step": strconv.FormatInt(m.Steps, 10)}
	for k, v := range m.Metadata {
		meta[k] = v
	}
	if err := onnx.Write(&model, m.Network.Layers(), meta); err != nil {
		return Exported{}, fmt.Errorf("web page: %w", err)
	}
	pageJSON, err := json.MarshalIndent(page, "", "  ")
	if err != nil {
		return Exported{}, fmt.Errorf("web page: %w", err)
	}
	files := map[string][]byte{modelFile: model.Bytes(), play.PageFile: append(pageJSON, '\n')}
	for _, name := range exportedPageFiles() {
		raw, err := pageFiles.ReadFile("static/" + name)
		if err != nil {
			return Exported{}, fmt.Errorf("web page: %w", err)
		}
		files[name] = raw
	}
	for _, name := range bundle.Files() {
		raw, err := readBundleFile(b, name)
		if err != nil {
			return Exported{}, fmt.Errorf("web page: %w", err)
		}
		files[name] = raw
	}
	if err := CheckExportFolder(dir); err != nil {
		return Exported{}, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Exported{}, fmt.Errorf("web page: %w", err)
	}
	out := Exported{Page: page}
	for _, name := range slices.Sorted(maps.Keys(files)) {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return out, fmt.Errorf("web page: %w", err)
		}
		if err := atomicfile.WriteBytes(p, files[name]); err != nil {
			return out, fmt.Errorf("web page: %w", err)
		}
		out.Files = append(out.Files, name)
		out.Bytes += int64(len(files[name]))
	}
	return out, nil
}

// exportPage is page.json of an export of m.
func exportPage(g env.Game, m ExportModel, o ExportOptions) (play.Page, error) {
	planes, h, w := g.EncodedShape()
	strength, search := o.Strength, o.Search
	// A run's model says when it was trained; a model file's header
	// when it was written, which the caller puts there too.
	created, _ := time.Parse(time.RFC3339, m.Metadata["trained"])
	network := play.NetworkOf(m.Network, m.Steps, created, m.Metadata["generation"])
	p := play.Page{
		Engine: play.EnginePage, Game: g.Name(), Model: modelFile, Input: []int{planes, h, w},
		Network: network, Strength: &strength, Search: &search, Human: o.Human, Seed: o.Seed, Version: o.Version,
	}
	// The page's engine reads it with the same checks, and knows the
	// games built into flipzero, not a program's own.
	if _, err := games.Builtin().ByName(g.Name()); err != nil {
		return play.Page{}, fmt.Errorf("web page: the page's engine plays the built-in games: %w", err)
	}
	raw, err := json.Marshal(p)
	if err != nil {
		return play.Page{}, fmt.Errorf("web page: %w", err)
	}
	if _, _, err := play.ReadPage(raw, games.Builtin()); err != nil {
		return play.Page{}, fmt.Errorf("web page: %w", err)
	}
	return p, nil
}

// CheckExportFolder says whether dir can take an export: a missing
// folder can; an existing one must be a folder, empty or an earlier
// export's (holding page.json), so that no one's other files are
// overwritten.
func CheckExportFolder(dir string) error {
	st, err := os.Stat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if !st.IsDir() {
		return fmt.Errorf("%s is not a folder", dir)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	if len(entries) == 0 {
		return nil
	}
	if _, err := os.Stat(filepath.Join(dir, play.PageFile)); err == nil {
		return nil
	}
	var names []string
	for _, e := range entries[:min(3, len(entries))] {
		names = append(names, e.Name())
	}
	if len(entries) > 3 {
		names = append(names, "…")
	}
	return fmt.Errorf("%s holds other files (%s); give a new or empty folder, or an earlier export's", dir, strings.Join(names, ", "))
}
