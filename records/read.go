// Package records turns games people (or earlier runs) played into
// training positions and into a measure of a network: the French
// federation's WTHOR databases (Othello), boardspace.net's SGF records
// (YINSH), and flipzero's own record lines (what flipzero convert prints,
// and a run folder's games/). Each record is replayed under the game's
// rules; what cannot be used — a damaged file, a record of another game,
// an illegal move, a game without a result — is left out, counted and
// named, and the rest is used.
//
// A Set holds the games as actions, a few bytes a move, so that the
// hundred thousand games of WTHOR fit in tens of megabytes: Positions
// replays a game to the position a training sample asks for, and Measure
// replays them to score a network's agreement with the moves played.
package records

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/env/othello"
	"github.com/flipzero/flipzero/env/yinsh"
	"github.com/flipzero/flipzero/runfolder"
)

// Record file kinds, told by the file name's extension: anything else is
// read as flipzero's record lines.
const (
	wthorExt = ".wtb"
	sgfExt   = ".sgf"
	linesExt = ".txt"
)

const (
	// wthorHeaderSize is a WTHOR file's header; its bytes 10 and 11 are
	// the year of the file's games.
	wthorHeaderSize = 16
	// maxLinesBytes bounds what is read of one file of record lines: all
	// of WTHOR as lines is some 25 MB.
	maxLinesBytes = 1 << 30
	// maxActions bounds a game's action space, which Game keeps as uint16.
	maxActions = 1 << 16
	// maxPlies bounds a record's length: no game of this project comes
	// near, and a record past it is damage.
	maxPlies = 1 << 15
)

// Game is one record replayed and checked under the rules: its actions,
// which of its positions are decisions to learn from, and its result.
type Game struct {
	// File is where the record was read, Index its place there (from 1),
	// Year the year of its games when the file says (WTHOR), else 0.
	File  string
	Index int
	Year  int
	// actions are the record's moves; plies the indices of those played
	// at a decision (not a chance event, not the only legal move), each
	// the position before actions[ply].
	actions []uint16
	plies   []uint16
	// result is each player's value of the game's end in [-1, 1]
	// (env.Value); hasResult is false for a record that stops before it
	// is decided.
	result    [2]float32
	hasResult bool
	// owned is who holds each cell at the end from the first player's
	// view (the second's is its negation), margin each player's final
	// margin: the auxiliary targets, present only where the record
	// reaches the end of the game.
	owned  []int8
	margin [2]float32
}

// Decisions is how many of the game's positions are decisions.
func (g *Game) Decisions() int { return len(g.plies) }

// HasResult says whether the record says how the game ended.
func (g *Game) HasResult() bool { return g.hasResult }

// Skipped counts what a load left out, by reason.
type Skipped struct {
	// Files could not be read at all: unreadable, or no records of a
	// kind flipzero reads.
	Files int
	// Damaged records a reader could not decode (a WTHOR record that
	// is no game, a line that is no record, an SGF file that does not
	// parse).
	Damaged int
	// OtherGame are records of another game than the one loaded.
	OtherGame int
	// Illegal are records with a move that is not the game's notation
	// or not legal where it is played.
	Illegal int
	// NoResult are records that stop before the game is decided, left
	// out where a result is needed (training the value).
	NoResult int
}

// Total is every record left out, and every file.
func (s Skipped) Total() int { return s.Files + s.Damaged + s.OtherGame + s.Illegal + s.NoResult }

// String lists the counts that are not zero: "2 damaged records, 878 of
// another game", or "nothing".
func (s Skipped) String() string {
	var parts []string
	add := func(n int, one, many string) {
		if n == 1 {
			parts = append(parts, "1 "+one)
		} else if n > 1 {
			parts = append(parts, strconv.Itoa(n)+" "+many)
		}
	}
	add(s.Files, "unreadable file", "unreadable files")
	add(s.Damaged, "damaged record", "damaged records")
	add(s.OtherGame, "record of another game", "records of another game")
	add(s.Illegal, "record with an illegal move", "records with an illegal move")
	add(s.NoResult, "record without a result", "records without a result")
	if len(parts) == 0 {
		return "nothing"
	}
	return strings.Join(parts, ", ")
}

func (s *Skipped) add(o Skipped) {
	s.Files += o.Files
	s.Damaged += o.Damaged
	s.OtherGame += o.OtherGame
	s.Illegal += o.Illegal
	s.NoResult += o.NoResult
}

// Set is the games read from some files.
type Set struct {
	Game  env.Game
	Games []Game
	// Files counts the files read, Skipped what was left out.
	Files   int
	Skipped Skipped
}

// Decisions is how many positions of the set's games are decisions.
func (s *Set) Decisions() int {
	n := 0
	for i := range s.Games {
		n += s.Games[i].Decisions()
	}
	return n
}

// Summary is the set in one line: "5,120 games, 301,233 positions from
// 1 file; left out: nothing".
func (s *Set) Summary() string {
	files := "files"
	if s.Files == 1 {
		files = "file"
	}
	return fmt.Sprintf("%d games, %d positions from %d %s; left out: %s", len(s.Games), s.Decisions(), s.Files, files, s.Skipped)
}

// Options say what Load keeps and where it reports.
type Options struct {
	// Unfinished keeps the records that stop before the game is decided
	// (the policy can be measured on them; the value cannot be trained).
	Unfinished bool
	// Report receives one line for each file with a problem, naming the
	// file and the first records at fault (nil: none).
	Report func(problem string)
}

// Load reads the games of g from paths: record files of any kind this
// package reads, folders of them (read whole, the files whose names end
// in .wtb, .sgf or .txt), and run folders (their games/). A path that
// does not exist is an error before anything is read — a mistyped name
// would otherwise quietly train on less — while a damaged file or record
// is reported, counted and passed over.
func Load(ctx context.Context, g env.Game, paths []string, opts Options) (*Set, error) {
	if g.ActionSpace() > maxActions {
		return nil, fmt.Errorf("records of %s: %d actions, more than %d", g.Name(), g.ActionSpace(), maxActions)
	}
	var files []string
	for _, p := range paths {
		found, err := recordFiles(p)
		if err != nil {
			return nil, err
		}
		files = append(files, found...)
	}
	set := &Set{Game: g}
	withProblems := 0
	for _, path := range files {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		games, skipped, problem := readFile(g, path, opts.Unfinished)
		set.Games = append(set.Games, games...)
		set.Skipped.add(skipped)
		if skipped.Files == 0 {
			set.Files++
		}
		if problem != "" {
			if withProblems < filesShown && opts.Report != nil {
				opts.Report(problem)
			}
			withProblems++
		}
	}
	if withProblems > filesShown && opts.Report != nil {
		opts.Report(fmt.Sprintf("and %d more files with records left out", withProblems-filesShown))
	}
	return set, nil
}

// missing is the error for a records path that does not exist, in the
// same words on every system (Windows says "GetFileAttributesEx …: The
// system cannot find the file specified").
type missing string

func (m missing) Error() string        { return string(m) + " does not exist" }
func (m missing) Is(target error) bool { return target == fs.ErrNotExist }

// filesShown is how many files with problems Load names, one line each:
// a folder of one-game files from elsewhere can hold hundreds, whose
// counts say the rest.
const filesShown = 10

// recordFiles lists the files a path names: itself, a run folder's game
// records, or a folder's record files, in name order.
func recordFiles(path string) ([]string, error) {
	info, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("records: %w", missing(path))
	}
	if err != nil {
		return nil, fmt.Errorf("records: %w", err)
	}
	if !info.IsDir() {
		return []string{path}, nil
	}
	if run := runfolder.Folder(path); run.Exists() {
		gens, err := run.RecordedGenerations()
		if err != nil {
			return nil, fmt.Errorf("records: %w", err)
		}
		if len(gens) == 0 {
			return nil, fmt.Errorf("records: run %s has no game records in %s", path, run.Games())
		}
		files := make([]string, len(gens))
		for i, gen := range gens {
			files[i] = run.GameRecords(gen)
		}
		return files, nil
	}
	var files []string
	err = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		switch strings.ToLower(filepath.Ext(p)) {
		case wthorExt, sgfExt, linesExt:
			if !d.IsDir() {
				files = append(files, p)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("records: %w", err)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("records: %s holds no record files (.wtb, .sgf, .txt)", path)
	}
	sort.Strings(files)
	return files, nil
}

// readFile reads one file's games, with what it left out and a line
// about its problems ("" when it had none).
func readFile(g env.Game, path string, unfinished bool) ([]Game, Skipped, string) {
	f := readRaw(path)
	if f.records == nil && f.err != nil {
		return nil, Skipped{Files: 1}, fmt.Sprintf("%s: %v", path, oneLine(f.err))
	}
	var problems []string
	if f.err != nil {
		problems = append(problems, oneLine(f.err))
	}
	skipped := Skipped{Damaged: f.damaged}
	games := make([]Game, 0, len(f.records))
	left := 0
	for _, rec := range f.records {
		game, why, err := replay(g, rec, unfinished)
		if err != nil {
			switch why {
			case otherGame:
				skipped.OtherGame++
			case illegal:
				skipped.Illegal++
			case noResult:
				skipped.NoResult++
			}
			if left < problemsShown {
				problems = append(problems, fmt.Sprintf("%s %d: %v", f.unit, rec.index, err))
			}
			left++
			continue
		}
		game.File, game.Index, game.Year = path, rec.index, f.year
		games = append(games, game)
	}
	if left > problemsShown {
		problems = append(problems, fmt.Sprintf("and %d more", left-problemsShown))
	}
	if len(problems) == 0 {
		return games, skipped, ""
	}
	return games, skipped, fmt.Sprintf("%s: %d of %d games used; %s", path, len(games), len(f.records)+f.damaged, strings.Join(problems, "; "))
}

// problemsShown is how many records a file's line names.
const problemsShown = 3

// rawRecord is a record as a file gives it, at its place in the file.
type rawRecord struct {
	env.Record
	index int
}

// fileRecords is what a file held: its records, the year of its games
// (WTHOR's header), how many records could not be decoded, what a place
// in the file is called ("record", "line", "game"), and what was wrong
// with it — with no records at all, that it could not be read.
type fileRecords struct {
	records []rawRecord
	year    int
	damaged int
	unit    string
	err     error
}

// readRaw reads a file's records in its kind.
func readRaw(path string) fileRecords {
	switch strings.ToLower(filepath.Ext(path)) {
	case wthorExt:
		return readWTHOR(path)
	case sgfExt:
		return readSGF(path)
	default:
		return readLines(path)
	}
}

func readWTHOR(path string) fileRecords {
	out := fileRecords{unit: "record"}
	f, err := os.Open(path)
	if err != nil {
		out.err = err
		return out
	}
	defer f.Close()
	var header [wthorHeaderSize]byte
	if _, err := io.ReadFull(f, header[:]); err != nil {
		out.err = errors.New("not a WTHOR file: its header is cut short")
		return out
	}
	out.year = int(binary.LittleEndian.Uint16(header[10:12]))
	recs, err := othello.ReadWTHOR(io.MultiReader(bytes.NewReader(header[:]), f))
	var bad othello.BadRecords
	if errors.As(err, &bad) {
		out.damaged = len(bad)
	}
	out.err = err
	if err != nil && len(recs) == 0 && out.damaged == 0 {
		return out
	}
	// ReadWTHOR leaves the bad records out: number the good ones by
	// their place in the file all the same.
	skip := map[int]bool{}
	for _, b := range bad {
		skip[b.Record] = true
	}
	out.records = make([]rawRecord, len(recs))
	n := 0
	for i := range recs {
		n++
		for skip[n] {
			n++
		}
		out.records[i] = rawRecord{recs[i], n}
	}
	return out
}

func readSGF(path string) fileRecords {
	out := fileRecords{unit: "game"}
	f, err := os.Open(path)
	if err != nil {
		out.err = err
		return out
	}
	defer f.Close()
	rec, err := yinsh.ReadBoardspace(f)
	if err != nil {
		// One game a file: the damaged record is the file's.
		out.records, out.damaged, out.err = []rawRecord{}, 1, err
		return out
	}
	out.records = []rawRecord{{rec, 1}}
	return out
}

// readLines reads flipzero's record lines (loop.FormatGame's, flipzero
// convert's): the moves joined by ';', a tab, the outcome, and a tab and
// the game where the line says it. A line that is no record is counted
// by its number; a file past maxLinesBytes is read up to it.
func readLines(path string) fileRecords {
	out := fileRecords{unit: "line"}
	f, err := os.Open(path)
	if err != nil {
		out.err = err
		return out
	}
	defer f.Close()
	r := bufio.NewReaderSize(io.LimitReader(f, maxLinesBytes), 1<<16)
	var bad []int
	for n := 1; ; n++ {
		line, long, err := r.ReadLine()
		if err == io.EOF {
			break
		}
		if err != nil {
			out.err = fmt.Errorf("line %d: %w", n, err)
			break
		}
		if long {
			// A line past the buffer is no record: pass over its rest.
			for long && err == nil {
				_, long, err = r.ReadLine()
			}
			bad = append(bad, n)
			continue
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		rec, ok := parseLine(string(line))
		if !ok {
			bad = append(bad, n)
			continue
		}
		out.records = append(out.records, rawRecord{rec, n})
	}
	out.damaged = len(bad)
	if out.records == nil && out.damaged == 0 && out.err == nil {
		out.err = errors.New("no records in it")
		return out
	}
	if out.records == nil {
		out.records = []rawRecord{}
	}
	if info, err := f.Stat(); err == nil && info.Size() > maxLinesBytes {
		out.err = errors.Join(out.err, fmt.Errorf("only its first %d bytes are read", maxLinesBytes))
	}
	if len(bad) > 0 {
		out.err = errors.Join(out.err, notRecords(bad))
	}
	return out
}

// parseLine reads a record line; ok is false for a line without an
// outcome after a tab.
func parseLine(line string) (env.Record, bool) {
	fields := strings.Split(strings.TrimRight(line, "\r"), "\t")
	if len(fields) < 2 {
		return env.Record{}, false
	}
	rec := env.Record{Outcome: fields[1]}
	if len(fields) > 2 {
		rec.Game = fields[2]
	}
	if fields[0] != "" {
		rec.Moves = strings.Split(fields[0], ";")
	}
	return rec, true
}

// notRecords names the lines that are no records: "line 3 is not a
// record", "lines 3, 7, 9 and 4 more are not records".
func notRecords(lines []int) error {
	if len(lines) == 1 {
		return fmt.Errorf("line %d is not a record", lines[0])
	}
	names := make([]string, 0, problemsShown)
	for _, n := range lines[:min(len(lines), problemsShown)] {
		names = append(names, strconv.Itoa(n))
	}
	more := ""
	if len(lines) > problemsShown {
		more = fmt.Sprintf(" and %d more", len(lines)-problemsShown)
	}
	return fmt.Errorf("lines %s%s are not records", strings.Join(names, ", "), more)
}

// Why a record was left out.
type reason int

const (
	otherGame reason = iota + 1
	illegal
	noResult
)

// replay plays a record under g's rules and keeps what training and
// measuring need of it.
func replay(g env.Game, rec rawRecord, unfinished bool) (Game, reason, error) {
	if rec.Game != "" && rec.Game != g.Name() {
		return Game{}, otherGame, fmt.Errorf("a record of %s, not %s", rec.Game, g.Name())
	}
	if len(rec.Moves) > maxPlies {
		return Game{}, illegal, fmt.Errorf("%d moves, more than %d", len(rec.Moves), maxPlies)
	}
	s := g.NewState()
	out := Game{actions: make([]uint16, 0, len(rec.Moves))}
	legal := make([]int, 0, g.ActionSpace())
	for i, text := range rec.Moves {
		a, err := env.ParseLegal(s, text)
		if err != nil {
			return Game{}, illegal, fmt.Errorf("move %d: %w", i+1, err)
		}
		if !env.IsChance(s) && len(s.LegalActions(legal)) > 1 {
			out.plies = append(out.plies, uint16(i))
		}
		out.actions = append(out.actions, uint16(a))
		s.Apply(a)
	}
	if s.Terminal() {
		out.hasResult = true
		for p := range out.result {
			out.result[p] = env.Value(s, env.Player(p))
		}
		if o, ok := s.(env.Ownership); ok {
			out.owned, out.margin = ownership(g, o)
		}
		return out, 0, nil
	}
	var ok bool
	out.result, ok = recordedResult(g, s, rec.Outcome)
	if ok {
		out.hasResult = true
	} else if !unfinished {
		return Game{}, noResult, fmt.Errorf("the record stops after %d moves without a result (%q)", len(rec.Moves), rec.Outcome)
	}
	return out, 0, nil
}

// recordedResult is each player's value of a record that stops before
// the rules end the game: the winner the record names (a resignation, a
// WTHOR record whose score was agreed), a draw, or a one-player game's
// score.
func recordedResult(g env.Game, s env.State, outcome string) ([2]float32, bool) {
	switch {
	case outcome == "draw":
		return [2]float32{}, true
	case outcome == g.PlayerName(0):
		return [2]float32{1, -1}, true
	case outcome == g.PlayerName(1):
		return [2]float32{-1, 1}, true
	}
	if text, ok := strings.CutPrefix(outcome, "score "); ok {
		score, err := strconv.ParseFloat(text, 64)
		if sc, scored := s.(env.Scorer); scored && err == nil {
			v := env.NormalizedScore(score, sc.MaxScore())
			return [2]float32{v, v}, true
		}
	}
	return [2]float32{}, false
}

// ownership is a final position's auxiliary targets: each cell from the
// first player's view, and each player's margin.
func ownership(g env.Game, o env.Ownership) ([]int8, [2]float32) {
	_, h, w := g.EncodedShape()
	cells := make([]float32, h*w)
	o.Ownership(0, cells)
	owned := make([]int8, len(cells))
	for c, v := range cells {
		owned[c] = int8(max(-1, min(1, math.Round(float64(v)))))
	}
	var margin [2]float32
	for p := range margin {
		margin[p] = max(-1, min(1, o.ScoreMargin(env.Player(p))))
	}
	return owned, margin
}

func oneLine(err error) string { return strings.ReplaceAll(err.Error(), "\n", " ") }
