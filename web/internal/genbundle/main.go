// Command genbundle builds web/bundle, which the flipzero binary embeds
// for "flipzero export --web": run by "go generate ./web" (in web/), after
// "npm ci --prefix web/ort" has installed ONNX Runtime Web.
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/flipzero/flipzero/web/internal/bundle"
)

func main() {
	// go generate runs this in web/, the module's root one level up.
	root, err := filepath.Abs("..")
	if err == nil {
		err = bundle.Build(context.Background(), "bundle", bundle.Options{Root: root, Gzip: true})
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "genbundle:", err)
		os.Exit(1)
	}
}
