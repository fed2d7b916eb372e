// Package runfolder is the layout of a training run's folder, defined in
// this one place: the loop writes it, and export, the arena's match log,
// ratings, plots and the run's web page read it. Its record files are
// appended and read under one policy (records.go).
//
//	config.yaml              the run's copy of its config
//	models/gen-NNNNNN.ckpt   the network after each generation, with optimizer state
//	data/gen-NNNNNN.shard    each generation's training positions
//	games/gen-NNNNNN.txt     each generation's self-play games, one a line
//	data/gen-NNNNNN-r-ID-Gg-pPPPPPP.shard  G games a worker sent for generation N, played by network P
//	cluster-id               the run's id on a NATS server (cluster)
//	nats/                    the embedded NATS server's JetStream storage
//	metrics.jsonl            one line per generation
//	status.json              the generation in progress and its phase
//	matches.jsonl            the arena's matches, one line each
//	plot.png                 curves drawn on request
package runfolder

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
)

// Folder is a run folder's path.
type Folder string

const (
	configName  = "config.yaml"
	modelsDir   = "models"
	dataDir     = "data"
	gamesDir    = "games"
	metricsName = "metrics.jsonl"
	statusName  = "status.json"
	matchesName = "matches.jsonl"
	plotName    = "plot.png"
)

var (
	checkpointName = regexp.MustCompile(`^gen-(\d{6})\.ckpt$`)
	recordsName    = regexp.MustCompile(`^gen-(\d{6})\.txt$`)
	receivedName   = regexp.MustCompile(`^gen-(\d{6})-r-([A-Za-z0-9_-]{1,64})-(\d{1,9})g-p(\d{6})\.shard$`)
)

// GenerationName is how a generation's files and the arena name it:
// gen-000012.
func GenerationName(gen int) string { return fmt.Sprintf("gen-%06d", gen) }

func (f Folder) path(parts ...string) string {
	return filepath.Join(append([]string{string(f)}, parts...)...)
}

// Config is the run's copy of its config.
func (f Folder) Config() string { return f.path(configName) }

// Models is the folder of the checkpoints.
func (f Folder) Models() string { return f.path(modelsDir) }

// Data is the folder of the training shards.
func (f Folder) Data() string { return f.path(dataDir) }

// Checkpoint is the checkpoint of generation gen.
func (f Folder) Checkpoint(gen int) string {
	return f.path(modelsDir, GenerationName(gen)+".ckpt")
}

// Shard is the training data generation gen played.
func (f Folder) Shard(gen int) string { return f.path(dataDir, GenerationName(gen)+".shard") }

// Games is the folder of the self-play game records.
func (f Folder) Games() string { return f.path(gamesDir) }

// GameRecords holds the games generation gen played in self-play, one a
// line as flipzero convert prints them: the moves joined by ';', a tab,
// the outcome, a tab, the game.
func (f Folder) GameRecords(gen int) string {
	return f.path(gamesDir, GenerationName(gen)+".txt")
}

// Status says which generation is in progress and in which phase; it is
// rewritten whole at each change, for the run's page to follow.
func (f Folder) Status() string { return f.path(statusName) }

// ReceivedShard is where games generation gen received from a worker
// are kept, games of them played by the network of generation played:
// the shard's id in the name is how a restarted trainer knows the shards
// it already has.
func (f Folder) ReceivedShard(gen int, id string, games, played int) string {
	return f.path(dataDir, fmt.Sprintf("%s-r-%s-%dg-p%06d.shard", GenerationName(gen), id, games, played))
}

// Received is a shard a worker sent, as its file name tells.
type Received struct {
	Generation int // the generation it was received for
	ID         string
	Games      int
	Played     int // the generation of the network that played it
	Path       string
}

// ReceivedShards lists the shards received from workers.
func (f Folder) ReceivedShards() ([]Received, error) {
	entries, err := os.ReadDir(f.Data())
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", f, err)
	}
	var out []Received
	for _, e := range entries {
		if m := receivedName.FindStringSubmatch(e.Name()); m != nil {
			gen, _ := strconv.Atoi(m[1])
			games, _ := strconv.Atoi(m[3])
			played, _ := strconv.Atoi(m[4])
			out = append(out, Received{gen, m[2], games, played, filepath.Join(f.Data(), e.Name())})
		}
	}
	return out, nil
}

// ClusterID holds the run's id on a NATS server, so that shards of
// another run of the same name are refused.
func (f Folder) ClusterID() string { return f.path("cluster-id") }

// NATS is the embedded NATS server's storage.
func (f Folder) NATS() string { return f.path("nats") }

// Metrics is the log of one line per generation.
func (f Folder) Metrics() string { return f.path(metricsName) }

// Matches is the arena's match log.
func (f Folder) Matches() string { return f.path(matchesName) }

// Plot is where curves are drawn unless the user says otherwise.
func (f Folder) Plot() string { return f.path(plotName) }

// ErrNoRun is what Check's error is (errors.Is) when the folder holds no
// run: it does not exist, or has no config. A command that starts runs
// starts one there; one that reads a run stops.
var ErrNoRun = errors.New("no run there")

// Check says whether the folder holds a run, in the words of someone who
// gave its path as --run: a file is not a run folder, and a folder that
// does not exist, or has no config, holds no run (ErrNoRun). Without it
// a command would fail on the first file it opened inside, with a
// message about that file ("open README.md/models: not a directory").
func (f Folder) Check() error {
	info, err := os.Stat(string(f))
	if err != nil {
		if file := fileAbove(string(f)); file != "" {
			return fmt.Errorf("%s: %s is a file, not a folder", f, file)
		}
	}
	var pathErr *fs.PathError
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return noRun{fmt.Sprintf("%s does not exist", f)}
	case errors.As(err, &pathErr):
		return fmt.Errorf("%s: %w", f, pathErr.Err)
	case err != nil:
		return err
	case !info.IsDir():
		return fmt.Errorf("%s is a file, not a run folder", f)
	case !f.Exists():
		return noRun{fmt.Sprintf("%s is not a run folder (no %s)", f, configName)}
	}
	return nil
}

// fileAbove is the nearest existing path above path if it is a file, else
// "": a path under a file is no folder, which Linux says ("not a
// directory") and Windows does not (it says the path does not exist).
func fileAbove(path string) string {
	for dir := filepath.Dir(path); ; {
		if info, err := os.Stat(dir); err == nil {
			if info.IsDir() {
				return ""
			}
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// noRun is Check's error for a folder that holds no run.
type noRun struct{ text string }

func (e noRun) Error() string        { return e.text }
func (e noRun) Is(target error) bool { return target == ErrNoRun }

// Exists reports whether the folder holds a run (its config).
func (f Folder) Exists() bool {
	_, err := os.Stat(f.Config())
	return err == nil
}

// Create makes the folder and its subfolders.
func (f Folder) Create() error {
	for _, dir := range []string{string(f), f.Models(), f.Data(), f.Games()} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("create run folder: %w", err)
		}
	}
	return nil
}

// Generations lists the generations that have a checkpoint, oldest first.
func (f Folder) Generations() ([]int, error) {
	return f.generationsIn(f.Models(), checkpointName)
}

// RecordedGenerations lists the generations whose self-play games are
// kept, oldest first; none when the folder has no games folder (a run
// started before games were kept).
func (f Folder) RecordedGenerations() ([]int, error) {
	gens, err := f.generationsIn(f.Games(), recordsName)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return gens, err
}

func (f Folder) generationsIn(dir string, name *regexp.Regexp) ([]int, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", f, err)
	}
	var gens []int
	for _, e := range entries {
		if m := name.FindStringSubmatch(e.Name()); m != nil {
			n, _ := strconv.Atoi(m[1])
			gens = append(gens, n)
		}
	}
	sort.Ints(gens)
	return gens, nil
}

// RemoveStaleTemporaries deletes the temporary files of writes that a
// kill interrupted: they were never renamed into place, so nothing needs
// them.
func (f Folder) RemoveStaleTemporaries() {
	for _, dir := range []string{string(f), f.Models(), f.Data(), f.Games()} {
		stale, _ := filepath.Glob(filepath.Join(dir, ".*.tmp*"))
		for _, path := range stale {
			os.Remove(path)
		}
	}
}
