package runfolder

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

type rec struct {
	N int    `json:"n"`
	S string `json:"s,omitempty"`
}

func readAll(t *testing.T, path string, limit int64, from From) ([]rec, int) {
	t.Helper()
	rs, skipped, err := ReadRecords(path, limit, from, JSONRecord[rec])
	if err != nil {
		t.Fatal(err)
	}
	return rs, skipped
}

// TestRecordsPolicy: appended records read back in order; a line that is
// not JSON, one whose value has the wrong type, one too long, and a last
// line cut short by a crash are each skipped and counted, and the records
// after them are read; a field the record lacks is left aside.
func TestRecordsPolicy(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "metrics.jsonl")
	for n := 1; n <= 3; n++ {
		if err := AppendRecord(path, rec{N: n}); err != nil {
			t.Fatal(err)
		}
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("not json\n\n{\"n\": \"four\"}\n{\"n\": 5, \"s\": \"" + strings.Repeat("x", MaxLineBytes) + "\"}\n{\"n\": 6")
	f.Close()
	// The cut line is ended before the next record, not joined to it.
	if err := AppendRecord(path, rec{N: 7}); err != nil {
		t.Fatal(err)
	}
	f, _ = os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("{\"n\": 8, \"newer\": true}\n")
	f.Close()
	rs, skipped := readAll(t, path, 1<<30, Start)
	if len(rs) != 5 || rs[0].N != 1 || rs[2].N != 3 || rs[3].N != 7 || rs[4].N != 8 || skipped != 4 {
		t.Errorf("read %v, %d skipped; want 1, 2, 3, 7, 8 and 4 skipped", rs, skipped)
	}
}

// TestRecordsLimit: a file over the limit is read from its start or its
// end, whole lines only.
func TestRecordsLimit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.jsonl")
	for n := 10; n < 20; n++ {
		if err := AppendRecord(path, rec{N: n}); err != nil {
			t.Fatal(err)
		}
	}
	line := int64(len(`{"n":10}` + "\n"))
	// Three lines and a half: three whole lines either way.
	first, skipped := readAll(t, path, 3*line+line/2, Start)
	last, skippedEnd := readAll(t, path, 3*line+line/2, End)
	if len(first) != 3 || first[0].N != 10 || first[2].N != 12 || skipped != 0 {
		t.Errorf("from the start: %v, %d skipped", first, skipped)
	}
	if len(last) != 3 || last[0].N != 17 || last[2].N != 19 || skippedEnd != 0 {
		t.Errorf("from the end: %v, %d skipped", last, skippedEnd)
	}
}

func TestRecordsErrors(t *testing.T) {
	dir := t.TempDir()
	if _, _, err := ReadRecords(filepath.Join(dir, "none.jsonl"), 1<<20, Start, JSONRecord[rec]); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing file: %v", err)
	}
	big := rec{S: strings.Repeat("y", MaxLineBytes)}
	if err := AppendRecord(filepath.Join(dir, "m.jsonl"), big); err == nil || !strings.Contains(err.Error(), "m.jsonl") {
		t.Errorf("a record over the line limit: %v", err)
	}
	if _, err := JSONRecord[rec]([]byte(`{"n":1} {"n":2}`)); err == nil {
		t.Error("two values on a line read as one record")
	}
}

func TestAppendLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "games", "gen-000001.txt")
	if err := AppendLines(path, []string{"a1;b2\tblack\ttictactoe", "c3\tdraw\ttictactoe"}); err != nil {
		t.Fatal(err)
	}
	if err := AppendLines(path, []string{"b1\twhite\ttictactoe"}); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(path)
	if got := string(raw); got != "a1;b2\tblack\ttictactoe\nc3\tdraw\ttictactoe\nb1\twhite\ttictactoe\n" {
		t.Errorf("file %q", got)
	}
	if err := AppendLines(path, []string{"two\nlines"}); err == nil {
		t.Error("a line with a newline was appended")
	}
}
