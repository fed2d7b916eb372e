// Package bundle builds what an exported page runs beside its own
// files: flipzero's engine compiled to WebAssembly (web/wasm) with the
// Go toolchain's wasm_exec.js that runs it, and ONNX Runtime Web's
// WebAssembly build, which evaluates the network. "go generate ./web"
// builds it into web/bundle, which the flipzero binary embeds; the tests
// build their own from the source they test.
package bundle

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/flipzero/flipzero/internal/atomicfile"
)

// The bundle's files, by their names in an exported page's folder.
const (
	Engine   = "flipzero.wasm"
	WasmExec = "wasm_exec.js"
	ORTDir   = "ort"
)

// ORTFiles are the files of onnxruntime-web's dist folder a page loads:
// the module the page imports, the Emscripten module it starts, and the
// WebAssembly SIMD build (the only one onnxruntime-web ships; a page
// without cross-origin isolation runs it on one thread).
func ORTFiles() []string {
	return []string{"ort.wasm.min.mjs", "ort-wasm-simd-threaded.mjs", "ort-wasm-simd-threaded.wasm"}
}

// Files lists every file of a bundle by its path in the page's folder.
func Files() []string {
	out := []string{Engine, WasmExec}
	for _, f := range ORTFiles() {
		out = append(out, ORTDir+"/"+f)
	}
	return out
}

// ORTPackage is where "npm ci --prefix web/ort" installs onnxruntime-web,
// relative to the module's root.
const ORTPackage = "web/ort/node_modules/onnxruntime-web"

// Options say what to build the bundle from.
type Options struct {
	// Root is the flipzero module's root folder, whose web/wasm is built.
	Root string
	// Go is the go command; "" finds it ($GOROOT/bin/go, else on $PATH).
	Go string
	// Gzip writes each file gzipped, NAME.gz, as the binary embeds them.
	Gzip bool
	// Tags are build tags for the engine: flipzero_gonet adds the
	// measurement of flipzero's own network in WebAssembly (web/wasm).
	Tags []string
}

// Build writes the bundle into the folder out, each file atomically.
func Build(ctx context.Context, out string, o Options) error {
	goCmd, err := goTool(o.Go)
	if err != nil {
		return err
	}
	dist := filepath.Join(o.Root, filepath.FromSlash(ORTPackage), "dist")
	for _, f := range ORTFiles() {
		if _, err := os.Stat(filepath.Join(dist, f)); err != nil {
			return fmt.Errorf("bundle: onnxruntime-web is not installed (npm ci --prefix web/ort): %w", err)
		}
	}
	if err := os.MkdirAll(filepath.Join(out, ORTDir), 0o755); err != nil {
		return fmt.Errorf("bundle: %w", err)
	}
	wasm, err := buildEngine(ctx, goCmd, o.Root, o.Tags)
	if err != nil {
		return err
	}
	if err := write(filepath.Join(out, Engine), wasm, o.Gzip); err != nil {
		return err
	}
	goroot, err := run(ctx, goCmd, o.Root, nil, "env", "GOROOT")
	if err != nil {
		return err
	}
	execJS, err := wasmExec(strings.TrimSpace(string(goroot)))
	if err != nil {
		return err
	}
	if err := write(filepath.Join(out, WasmExec), execJS, o.Gzip); err != nil {
		return err
	}
	for _, f := range ORTFiles() {
		b, err := os.ReadFile(filepath.Join(dist, f))
		if err != nil {
			return fmt.Errorf("bundle: %w", err)
		}
		if err := write(filepath.Join(out, ORTDir, f), b, o.Gzip); err != nil {
			return err
		}
	}
	return nil
}

// buildEngine compiles web/wasm for the browser and returns the module.
func buildEngine(ctx context.Context, goCmd, root string, tags []string) ([]byte, error) {
	tmp, err := os.MkdirTemp("", "flipzero-wasm-")
	if err != nil {
		return nil, fmt.Errorf("bundle: %w", err)
	}
	defer os.RemoveAll(tmp)
	bin := filepath.Join(tmp, Engine)
	env := []string{"GOOS=js", "GOARCH=wasm", "CGO_ENABLED=0"}
	args := []string{"build", "-trimpath", "-o", bin}
	if len(tags) > 0 {
		args = append(args, "-tags", strings.Join(tags, ","))
	}
	if _, err := run(ctx, goCmd, root, env, append(args, "./web/wasm")...); err != nil {
		return nil, err
	}
	b, err := os.ReadFile(bin)
	if err != nil {
		return nil, fmt.Errorf("bundle: %w", err)
	}
	return b, nil
}

// wasmExec reads the toolchain's wasm_exec.js, which must be the one of
// the Go that built the module: lib/wasm since Go 1.24, misc/wasm before.
func wasmExec(goroot string) ([]byte, error) {
	var firstErr error
	for _, dir := range []string{"lib/wasm", "misc/wasm"} {
		b, err := os.ReadFile(filepath.Join(goroot, filepath.FromSlash(dir), WasmExec))
		if err == nil {
			return b, nil
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	return nil, fmt.Errorf("bundle: Go's %s: %w", WasmExec, firstErr)
}

func write(path string, b []byte, gz bool) error {
	if !gz {
		return atomicfile.WriteBytes(path, b)
	}
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if _, err := zw.Write(b); err != nil {
		return fmt.Errorf("bundle: %w", err)
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("bundle: %w", err)
	}
	return atomicfile.WriteBytes(path+".gz", buf.Bytes())
}

// goTool finds the go command: given, $GOROOT's (which go generate and
// go test set), or the one on $PATH.
func goTool(given string) (string, error) {
	if given != "" {
		return given, nil
	}
	if root := os.Getenv("GOROOT"); root != "" {
		if p := filepath.Join(root, "bin", "go"); fileExists(p) {
			return p, nil
		}
	}
	p, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("bundle: the go command is needed to build the engine: %w", err)
	}
	return p, nil
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

func run(ctx context.Context, goCmd, dir string, env []string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, goCmd, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("bundle: go %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}
