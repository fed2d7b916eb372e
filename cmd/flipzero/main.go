// Command flipzero trains game-playing bots by self-play and plays them.
// Run "flipzero help" for the subcommands.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"sort"
	"strings"

	"github.com/flipzero/flipzero/loop"
	"github.com/flipzero/flipzero/nn"
	"github.com/flipzero/flipzero/nn/cpu"
)

// command is one subcommand.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, stdio stdio) error
}

// stdio is where a command reads and writes, so tests can run commands
// in-process.
type stdio struct {
	in       io.Reader
	out, err io.Writer
}

// usageError marks bad usage or bad input: exit status 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}

func commands() []command {
	cmds := []command{
		{"perft", "count the leaves of the game tree to a depth", runPerft},
		{"moves", "list legal moves after move sequences read from standard input", runMoves},
		{"bench", "measure speed: bench env|... --game G", runBench},
		{"convert", "convert game records from other formats to flipzero's notation", runConvert},
		{"loop", "train by self-play: start or resume a run", runLoop},
		{"pretrain", "train a run's first network from game records, or a new one from another run's window", runPretrain},
		{"plot", "draw a run's loss and rating curves to a PNG", runPlot},
		{"analyze", "search a position and print each action's statistics, or measure a network on game records", runAnalyze},
		{"export", "write a run's checkpoint as a self-contained model file", runExport},
		{"info", "print what a model or checkpoint file holds", runInfo},
		{"play", "play against a model in the terminal", runPlay},
		{"gtp", "play a model as a GTP engine on standard input and output", runGTP},
		{"serve", "serve a web page to play against a model in a browser", runServe},
		{"arena", "play games between two players and print the score and Elo difference", runArena},
		{"ratings", "fit Elo ratings to every match stored in a run", runRatings},
		{"worker", "play self-play games for a run whose trainer is on another machine (NATS)", runWorker},
	}
	sort.Slice(cmds, func(i, j int) bool { return cmds[i].name < cmds[j].name })
	return cmds
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], stdio{os.Stdin, os.Stdout, os.Stderr}))
}

// run runs one command line and returns the exit status.
func run(ctx context.Context, args []string, io stdio) int {
	if len(args) > 0 && (args[0] == "version" || args[0] == "--version" || args[0] == "-version") {
		fmt.Fprintln(io.out, versionLine())
		fmt.Fprintln(io.out, cpuLine())
		return 0
	}
	if len(args) == 2 && args[0] == "help" {
		// "help loop" is "loop --help".
		args = []string{args[1], "--help"}
	}
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" || args[0] == "-help" {
		printHelp(io.out)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	for _, c := range commands() {
		if c.name != args[0] {
			continue
		}
		err := c.run(ctx, args[1:], io)
		switch {
		case err == nil:
			return 0
		case errors.Is(err, flag.ErrHelp):
			return 0
		default:
			fmt.Fprintf(io.err, "flipzero %s: %v\n", c.name, oneLine(err))
			if isInputError(err) {
				return 2
			}
			return 1
		}
	}
	fmt.Fprintf(io.err, "flipzero: unknown command %q (run \"flipzero help\")\n", args[0])
	return 2
}

// isInputError tells bad usage or bad input (exit status 2: a flag, a
// config, a file that is missing or not what it should be) from a failure
// inside (1).
func isInputError(err error) bool {
	var ue usageError
	var ce loop.ConfigError
	var ie loop.InputError
	return errors.As(err, &ue) || errors.As(err, &ce) || errors.As(err, &ie) || errors.Is(err, fs.ErrNotExist) || errors.Is(err, nn.ErrCorrupt)
}

func oneLine(err error) string {
	return strings.ReplaceAll(err.Error(), "\n", " ")
}

// versionLine says which flipzero this is: the module's version (a
// release tag, or "devel" for a build from a checkout), the commit it was
// built from when the build recorded one, the Go release and the
// platform.
func versionLine() string {
	version, revision, modified := "devel", "", false
	if info, ok := debug.ReadBuildInfo(); ok {
		if v := info.Main.Version; v != "" && v != "(devel)" {
			version = v
		}
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				revision = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
	}
	return formatVersion(version, revision, modified)
}

// cpuLine says what the CPU backend runs on this machine: the
// convolution's kernels for this CPU (--device cpu's, and cpu-fp32's
// where they differ) and the matrix-multiply library found (OpenBLAS
// where it is installed, else gonum's pure Go).
func cpuLine() string {
	return fmt.Sprintf("cpu backend: convolutions %s; training %s; BLAS %s", cpuConvolutions(), cpuTraining(), cpu.BLASInfo())
}

// cpuTraining says how --device cpu trains, and cpu-fp32 where it differs.
func cpuTraining() string {
	info := func(b nn.Backend) string {
		if t, ok := b.(interface{ TrainInfo() string }); ok {
			return t.TrainInfo()
		}
		return "float32"
	}
	fast, float32s := info(cpu.FastBackend()), info(cpu.Backend())
	if fast == float32s {
		return fast
	}
	return fast + ", in float32 (cpu-fp32) " + strings.TrimPrefix(float32s, "float32 ")
}

func cpuConvolutions() string {
	fast, float32s := cpu.FastBackend().Name(), cpu.Backend().Name()
	if fast == float32s {
		return cpu.ConvInfo()
	}
	conv := cpu.ConvInfo()
	if c, ok := cpu.FastBackend().(interface{ ConvInfo() string }); ok {
		conv = c.ConvInfo() + ", in float32 (cpu-fp32) " + cpu.ConvInfo()
	}
	return conv
}

// formatVersion is versionLine from what the build recorded.
func formatVersion(version, revision string, modified bool) string {
	line := "flipzero " + version
	switch {
	case revision != "":
		line += " " + revision[:min(12, len(revision))]
		if modified {
			line += "+changes"
		}
	case version == "devel":
		// go run, or a build outside a git checkout: nothing says which
		// commit this is.
		line += ", built without version-control data (go build in a git checkout records the commit)"
	}
	return fmt.Sprintf("%s (%s %s/%s)", line, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

func printHelp(w io.Writer) {
	fmt.Fprintln(w, "flipzero trains game-playing bots by self-play (AlphaZero-style) and plays them.")
	fmt.Fprintln(w, "\nUsage: flipzero <command> [flags]\n\nCommands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nRun \"flipzero <command> --help\" for a command's flags, \"flipzero --version\" for the version.")
}

// flagSet is a flag.FlagSet whose errors are returned, not printed and
// exited on, and whose --help prints the usage to standard output.
type flagSet struct {
	*flag.FlagSet
	usage string
	out   io.Writer
	// takesFiles lets arguments follow the flags.
	takesFiles bool
}

func newFlags(name, usage string, out io.Writer) *flagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return &flagSet{FlagSet: fs, usage: usage, out: out}
}

// parseFlags parses args; --help prints the usage and returns flag.ErrHelp.
func parseFlags(fs *flagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(fs.out, "Usage: flipzero %s\n\nFlags:\n", fs.usage)
			fs.SetOutput(fs.out)
			fs.PrintDefaults()
			return err
		}
		return usageError{errors.New(dashes(err.Error()))}
	}
	if fs.NArg() > 0 && !fs.takesFiles {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	return nil
}

// dashes writes the flag package's "-name" as "--name", the way the usage
// and the documentation spell flags.
func dashes(msg string) string {
	for _, before := range []string{"flag -", "defined: -", "argument: -"} {
		msg = strings.Replace(msg, before, before+"-", 1)
	}
	return msg
}
