package cluster

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
)

var validName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// CheckName reports whether name can name a run on a NATS server: it
// becomes part of stream, bucket and subject names, which allow only
// these characters.
func CheckName(name string) error {
	if !validName.MatchString(name) {
		return fmt.Errorf("run name %q: use 1 to 64 letters, digits, '-' or '_'", name)
	}
	return nil
}

// NameOf is the default run name of a run folder: its base name, with
// characters NATS does not allow in names replaced by '-'.
func NameOf(runDir string) string {
	base := filepath.Base(filepath.Clean(runDir))
	name := strings.Map(func(r rune) rune {
		if r < 128 && validName.MatchString(string(r)) {
			return r
		}
		return '-'
	}, base)
	if len(name) > 64 {
		name = name[len(name)-64:]
	}
	if name == "" || name == "-" {
		name = "run"
	}
	return name
}

func stateBucket(name string) string { return "flipzero_" + name }
func modelStore(name string) string  { return "flipzero_" + name + "_models" }
func shardStream(name string) string { return "FLIPZERO_" + name + "_SHARDS" }
func shardSubject(name string) string {
	return "flipzero." + name + ".shards"
}

const (
	stateKey     = "state"
	consumerName = "trainer"
)
