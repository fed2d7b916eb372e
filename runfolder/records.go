package runfolder

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// The run folder's record files — metrics.jsonl, matches.jsonl, the
// games of each generation — are lines appended as the run goes and read
// by the loop, the arena, ratings, plots and the run's page, one of which
// may be reading while another writes, and any of which may meet a file
// from another machine or edited by hand. One policy holds for all of
// them:
//
//   - a record is appended as one line, synced; the file is never
//     rewritten, and a last line that a crash cut short is ended first,
//     so that it stays one bad line rather than spoiling the next;
//   - a reader reads at most a limit of bytes, from the file's start or,
//     where the newest records matter, from its end (the line the cut
//     falls in is left out whole);
//   - a blank line is passed over, and a line over MaxLineBytes or one
//     that does not parse as a record is skipped and counted, never an
//     error: the records around it are still there.

// MaxLineBytes bounds one record's line.
const MaxLineBytes = 1 << 16

// From says where a reader starts in a file over its limit.
type From int

const (
	// Start reads the oldest records.
	Start From = iota
	// End reads the newest.
	End
)

// ReadRecords reads the records of a line file under the folder's
// policy: parse turns a line (without its newline) into a record or says
// why it is not one. It returns the records in file order and how many
// lines were skipped.
func ReadRecords[T any](path string, limit int64, from From, parse func(line []byte) (T, error)) (records []T, skipped int, err error) {
	raw, err := readLimited(path, limit, from)
	if err != nil {
		return nil, 0, err
	}
	records = []T{}
	for line := range bytes.Lines(raw) {
		line = bytes.TrimRight(line, "\r\n")
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if len(line) > MaxLineBytes {
			skipped++
			continue
		}
		r, err := parse(line)
		if err != nil {
			skipped++
			continue
		}
		records = append(records, r)
	}
	return records, skipped, nil
}

// readLimited reads at most limit bytes of the file, whole lines only.
func readLimited(path string, limit int64, from From) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	cut := info.Size() > limit
	if cut && from == End {
		if _, err := f.Seek(info.Size()-limit, io.SeekStart); err != nil {
			return nil, fmt.Errorf("read %s: %w", path, err)
		}
	}
	raw, err := io.ReadAll(io.LimitReader(f, limit))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	switch {
	case cut && from == End:
		// The first line read is the end of one the cut fell in.
		raw = raw[bytes.IndexByte(raw, '\n')+1:]
	case cut:
		raw = raw[:bytes.LastIndexByte(raw, '\n')+1]
	}
	return raw, nil
}

// JSONRecord parses a line as one JSON value of T. Fields T does not
// have are left aside, so that a record a newer flipzero wrote still
// reads; a value of the wrong type is not a record.
func JSONRecord[T any](line []byte) (T, error) {
	var v T
	dec := json.NewDecoder(bytes.NewReader(line))
	if err := dec.Decode(&v); err != nil {
		return v, err
	}
	if dec.More() {
		return v, errors.New("more than one value on the line")
	}
	return v, nil
}

// AppendRecord appends v to the line file at path as one JSON line,
// synced, making the file and its folder if need be.
func AppendRecord(path string, v any) error {
	line, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("append to %s: %w", path, err)
	}
	if len(line) > MaxLineBytes {
		return fmt.Errorf("append to %s: a record of %d bytes, more than %d", path, len(line), MaxLineBytes)
	}
	return appendLine(path, line)
}

// AppendLines appends text lines (a generation's game records) in one
// synced write, under the same policy as AppendRecord.
func AppendLines(path string, lines []string) error {
	if len(lines) == 0 {
		return nil
	}
	var b []byte
	for i, l := range lines {
		if strings.ContainsAny(l, "\r\n") || len(l) > MaxLineBytes {
			return fmt.Errorf("append to %s: line %d is not one line of at most %d bytes", path, i, MaxLineBytes)
		}
		if i > 0 {
			b = append(b, '\n')
		}
		b = append(b, l...)
	}
	return appendLine(path, b)
}

func appendLine(path string, line []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("append to %s: %w", path, err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("append to %s: %w", path, err)
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("append to %s: %w", path, err)
	}
	out := make([]byte, 0, len(line)+2)
	if size := info.Size(); size > 0 {
		last := make([]byte, 1)
		if _, err := f.ReadAt(last, size-1); err != nil {
			f.Close()
			return fmt.Errorf("append to %s: read its last byte: %w", path, err)
		}
		if last[0] != '\n' {
			// A line cut short by a crash: end it, so that it stays
			// one bad line.
			out = append(out, '\n')
		}
	}
	out = append(append(out, line...), '\n')
	if _, err := f.Write(out); err != nil {
		f.Close()
		return fmt.Errorf("append to %s: write: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("append to %s: sync: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("append to %s: close: %w", path, err)
	}
	return nil
}
