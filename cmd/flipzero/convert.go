package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/env/games"
)

// recordReader reads the games of one file of a foreign format. It may
// return good records together with an error about bad ones.
type recordReader func(path string) ([]env.Record, error)

func runConvert(ctx context.Context, args []string, io stdio) error {
	readers := recordReaders()
	var formats []string
	for name := range readers {
		formats = append(formats, name)
	}
	sort.Strings(formats)
	fs := newFlags("convert", "convert --from "+strings.Join(formats, "|")+" FILE…\n\nPrints one line per game: the moves joined by ';', a tab, the outcome, a tab, the game.", io.out)
	from := fs.String("from", "", "format of the files: "+strings.Join(formats, ", "))
	fs.takesFiles = true
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	read, ok := readers[*from]
	if !ok {
		return usagef("--from must be one of %s, got %q", strings.Join(formats, ", "), *from)
	}
	if fs.NArg() == 0 {
		return usagef("no files to convert")
	}
	out := bufio.NewWriter(io.out)
	defer out.Flush()
	failed := 0
	for _, path := range fs.Args() {
		if err := ctx.Err(); err != nil {
			return err
		}
		records, err := read(path)
		for _, r := range records {
			fmt.Fprintln(out, r.Line())
		}
		if err != nil && fs.NArg() == 1 {
			return usageError{err}
		}
		if err != nil {
			failed++
			out.Flush()
			fmt.Fprintf(io.err, "flipzero convert: %s\n", oneLine(err))
		}
	}
	if failed > 0 {
		return usagef("%d of %d files had records that could not be read", failed, fs.NArg())
	}
	return nil
}

// recordReaders are the formats convert reads, each naming its file in
// its errors.
func recordReaders() map[string]recordReader {
	out := map[string]recordReader{}
	for name, read := range games.RecordFormats() {
		out[name] = readFileWith(read)
	}
	return out
}

// readFileWith adapts a reader of one open file to a recordReader that
// names the file in its errors.
func readFileWith(read func(r io.Reader) ([]env.Record, error)) recordReader {
	return func(path string) ([]env.Record, error) {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		records, err := read(bufio.NewReader(f))
		if err != nil {
			return records, fmt.Errorf("%s: %w", path, err)
		}
		return records, nil
	}
}
