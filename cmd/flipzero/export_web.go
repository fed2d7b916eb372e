package main

import (
	"fmt"
	"math"
	"time"

	"github.com/flipzero/flipzero/engine"
	"github.com/flipzero/flipzero/loop"
	"github.com/flipzero/flipzero/mcts"
	"github.com/flipzero/flipzero/runfolder"
	"github.com/flipzero/flipzero/web"
	"github.com/flipzero/flipzero/web/play"
)

// webExportFlags are export's flags for --web: what the page plays and
// how hard.
type webExportFlags struct {
	dir, model, search, as *string
	playouts               *int
	seconds                *float64
	seed                   *uint64
}

func addWebExportFlags(fs *flagSet) webExportFlags {
	return webExportFlags{
		dir:      fs.String("web", "", "write a web page that plays the network with no server into this folder"),
		model:    fs.String("model", "", "with --web: the model file (from export) or checkpoint to play, instead of --run"),
		playouts: fs.Int("playouts", 400, "with --web: the page's search playouts per decision"),
		seconds:  fs.Float64("seconds", 0, "with --web: the page's search time per decision in seconds, instead of --playouts"),
		search:   fs.String("search", "", "with --web: search settings over the play defaults, as in a config's search section: 'mode: gumbel'"),
		as:       fs.String("as", "", "with --web: the person's side in the first game (default: the side that moves first)"),
		seed:     fs.Uint64("seed", 0, "with --web: seed of the deals of a game with chance events (default 0: drawn in the page from its clock, new deals each visit)"),
	}
}

// exportWeb writes the page of --web: the network of --model, or of a
// run's generation.
func exportWeb(f webExportFlags, run string, gen int, out string, io stdio) error {
	switch {
	case out != "":
		return usagef("--web writes a folder; --out is for a model file: give one of them")
	case *f.model != "" && run != "":
		return usagef("--web takes --model or --run, not both")
	case *f.model == "" && run == "":
		return usagef("--web needs --model FILE or --run DIR")
	case *f.model != "" && gen >= 0:
		return usagef("--checkpoint picks a generation of --run, not of --model")
	}
	opts, err := f.options()
	if err != nil {
		return err
	}
	m, err := f.network(run, gen)
	if err != nil {
		return usageError{err}
	}
	if *f.as != "" {
		if _, err := sideFlag(m.Network.Game(), *f.as); err != nil {
			return err
		}
	}
	if err := web.CheckExportFolder(*f.dir); err != nil {
		return usageError{fmt.Errorf("--web: %w", err)}
	}
	bundle, err := web.EmbeddedBundle()
	if err != nil {
		return err
	}
	done, err := web.Export(*f.dir, m, opts, bundle)
	if err != nil {
		return usageError{err}
	}
	_, err = fmt.Fprintf(io.out, "wrote %s: %d files, %.1f MB: the %s, playing %s with %s.\n"+
		"Any static file server hosts it as it is: python3 -m http.server -d %s, then open http://localhost:8000/\n",
		*f.dir, len(done.Files), float64(done.Bytes)/1e6, done.Page.Network.Text(), strengthText(*done.Page.Strength),
		play.SearchText(done.Page.Search.ActingOn(m.Network.Game())), *f.dir)
	return err
}

// options reads the page's strength, search and sides.
func (f webExportFlags) options() (web.ExportOptions, error) {
	if *f.seconds < 0 || math.IsNaN(*f.seconds) || *f.seconds > play.MaxSeconds {
		return web.ExportOptions{}, usagef("--seconds must be between 0 and %d, got %v", play.MaxSeconds, *f.seconds)
	}
	if *f.seconds == 0 && (*f.playouts < 1 || *f.playouts > play.MaxPlayouts) {
		return web.ExportOptions{}, usagef("--playouts must be 1 to %d, got %d", play.MaxPlayouts, *f.playouts)
	}
	o := web.ExportOptions{Search: mcts.PlayConfig(), Human: *f.as, Seed: *f.seed, Version: versionLine(),
		Strength: play.Strength{Playouts: *f.playouts, Seconds: *f.seconds}}
	if *f.seconds > 0 {
		o.Strength.Playouts = 0
	}
	if *f.search != "" {
		s, err := loop.ParseSearchSettings(*f.search, mcts.PlayConfig())
		if err != nil {
			return web.ExportOptions{}, usageError{fmt.Errorf("--search: %w", err)}
		}
		o.Search = s
	}
	return o, nil
}

// network loads the network to export: a model file, or a run's
// generation (the newest when gen is negative).
func (f webExportFlags) network(run string, gen int) (web.ExportModel, error) {
	if *f.model != "" {
		c, _, err := engine.LoadModel(*f.model, nil)
		if err != nil {
			return web.ExportModel{}, err
		}
		meta := map[string]string{}
		for k, v := range c.Metadata {
			meta[k] = v
		}
		if _, ok := meta["trained"]; !ok && !c.Created.IsZero() {
			meta["trained"] = c.Created.UTC().Format(time.RFC3339)
		}
		return web.ExportModel{Network: c.Network.Fold(), Steps: c.Step, Metadata: meta}, nil
	}
	m, err := loop.LoadModel(runfolder.Folder(run), gen, nil)
	if err != nil {
		return web.ExportModel{}, err
	}
	return web.ExportModel{Network: m.Network, Steps: m.Step, Metadata: m.Metadata}, nil
}

func strengthText(s play.Strength) string {
	if s.Seconds > 0 {
		return fmt.Sprintf("%g s a move", s.Seconds)
	}
	return fmt.Sprintf("%d playouts a move", s.Playouts)
}
