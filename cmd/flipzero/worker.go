package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/flipzero/flipzero/cluster"
	"github.com/flipzero/flipzero/env/games"
	"github.com/flipzero/flipzero/loop"
	"github.com/flipzero/flipzero/nn"
	"github.com/flipzero/flipzero/runfolder"
)

// natsFlags are the flags of every command that talks to a NATS server.
type natsFlags struct {
	url, ca, token, user, password *string
}

func addNATSFlags(fs *flagSet) natsFlags {
	return natsFlags{
		url:      fs.String("nats", "", "NATS server URL (nats://host:4222, tls://host:4222 for TLS; a token or user:password may be in it)"),
		ca:       fs.String("nats-ca", "", "PEM file of the authority that signed the server's TLS certificate (default: the system's)"),
		token:    fs.String("nats-token", "", "the server's token (default $FLIPZERO_NATS_TOKEN)"),
		user:     fs.String("nats-user", "", "user name on the server (default $FLIPZERO_NATS_USER)"),
		password: fs.String("nats-password", "", "password on the server (default $FLIPZERO_NATS_PASSWORD)"),
	}
}

// auth is the flags' credentials, or the environment's for those not
// given: read here, not as the flags' defaults, so that --help never
// prints a secret.
func (f natsFlags) auth() cluster.Auth {
	or := func(flag *string, env string) string {
		if *flag != "" {
			return *flag
		}
		return os.Getenv(env)
	}
	return cluster.Auth{
		Token:    or(f.token, "FLIPZERO_NATS_TOKEN"),
		User:     or(f.user, "FLIPZERO_NATS_USER"),
		Password: or(f.password, "FLIPZERO_NATS_PASSWORD"),
	}
}

func (f natsFlags) connect(srv *server.Server, name string) (*nats.Conn, error) {
	return cluster.Connect(cluster.ConnectOptions{URL: *f.url, Server: srv, Auth: f.auth(), CAFile: *f.ca, Name: name})
}

func runWorker(ctx context.Context, args []string, io stdio) error {
	fs := newFlags("worker", "worker --nats URL --run NAME [--workers N]\n\n"+
		"Plays self-play games for a run whose trainer (flipzero loop --nats or\n"+
		"--serve-nats) is elsewhere: fetches the newest network, plays with all its\n"+
		"cores, sends the games back, and picks up each new network as it appears.\n"+
		"Ctrl-C stops it; a killed worker loses only its games in progress.", io.out)
	nf := addNATSFlags(fs)
	name := fs.String("run", "", "the run's name on the server (the trainer's run folder's base name unless it set --name)")
	workers := fs.Int("workers", 0, "self-play workers, each with its own evaluator (0: one per core)")
	id := fs.String("id", "", "this worker's name in the trainer's log (default host-pid)")
	seed := addSeedFlag(fs, "random seed")
	dev := addDeviceFlag(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *nf.url == "" || *name == "" {
		return usagef("--nats and --run are required")
	}
	if err := cluster.CheckName(*name); err != nil {
		return usageError{err}
	}
	if *workers < 0 {
		return usagef("--workers must not be negative")
	}
	backend, say, err := dev.open()
	if err != nil {
		return err
	}
	say(io.err)
	// Workers may well start before their trainer's server: wait for it.
	var nc *nats.Conn
	for attempt := 0; ; attempt++ {
		var err error
		if nc, err = nf.connect(nil, "flipzero worker"); err == nil {
			break
		}
		if attempt == 0 && !errors.Is(err, nats.ErrNoServers) {
			return err // not a server that is away: bad credentials, TLS, URL
		}
		if attempt%30 == 0 {
			fmt.Fprintf(io.err, "flipzero worker: %v (retrying every second)\n", oneLine(err))
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(time.Second):
		}
	}
	defer nc.Close()
	err = cluster.RunWorker(ctx, nc, cluster.WorkerOptions{
		Name: *name, Games: games.Builtin(), Workers: *workers, ID: *id, Backend: backend,
		Version: versionLine(), Seed: seed(), Log: io.err,
	})
	if errors.Is(err, cluster.ErrIncompatible) {
		return usageError{err}
	}
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// clusterFlags are the loop's flags for a run spread over machines.
type clusterFlags struct {
	nats         natsFlags
	serve        *string
	name         *string
	localWorkers *int
	maxStale     *int
	tlsCert      *string
	tlsKey       *string
}

func addClusterFlags(fs *flagSet) clusterFlags {
	return clusterFlags{
		nats:         addNATSFlags(fs),
		serve:        fs.String("serve-nats", "", "run a NATS server in this process on host:port (JetStream storage in the run folder); workers join with --nats"),
		name:         fs.String("name", "", "the run's name on the NATS server (default: the run folder's base name)"),
		localWorkers: fs.Int("local-workers", -1, "with --nats or --serve-nats: self-play workers in this process (-1: as the config says, one per core by default; 0: none)"),
		maxStale:     fs.Int("max-stale", 1, "with --nats or --serve-nats: refuse games played by a network more than this many generations older than the newest"),
		tlsCert:      fs.String("tls-cert", "", "with --serve-nats: the server's TLS certificate (PEM); clients then use tls:// URLs"),
		tlsKey:       fs.String("tls-key", "", "with --serve-nats: the key of --tls-cert (PEM)"),
	}
}

func (c clusterFlags) enabled() bool { return *c.nats.url != "" || *c.serve != "" }

func (c clusterFlags) validate() error {
	if !c.enabled() {
		return nil
	}
	switch {
	case *c.nats.url != "" && *c.serve != "":
		return usagef("give --nats (a server elsewhere) or --serve-nats (one in this process), not both")
	case *c.maxStale < 0:
		return usagef("--max-stale must not be negative")
	case (*c.tlsCert == "") != (*c.tlsKey == ""):
		return usagef("--tls-cert and --tls-key go together")
	case *c.tlsCert != "" && *c.serve == "":
		return usagef("--tls-cert is for --serve-nats")
	case *c.name != "":
		if err := cluster.CheckName(*c.name); err != nil {
			return usageError{err}
		}
	}
	return nil
}

// startCluster makes the loop's remote: the embedded server when asked
// for, the trainer's connection, and the local workers. stop ends them.
func startCluster(ctx context.Context, c clusterFlags, runDir string, backend nn.Backend, io stdio) (loop.Remote, func(), error) {
	var srv *server.Server
	if *c.serve != "" {
		var err error
		srv, err = cluster.Serve(cluster.ServerOptions{
			Addr: *c.serve, StoreDir: runfolder.Folder(runDir).NATS(), Auth: c.nats.auth(),
			TLSCert: *c.tlsCert, TLSKey: *c.tlsKey,
		})
		if err != nil {
			return nil, nil, usageError{err}
		}
	}
	stopServer := func() {
		if srv != nil {
			srv.Shutdown()
			srv.WaitForShutdown()
		}
	}
	nc, err := c.nats.connect(srv, "flipzero trainer")
	if err != nil {
		stopServer()
		return nil, nil, err
	}
	name := *c.name
	if name == "" {
		name = cluster.NameOf(runDir)
	}
	trainer, err := cluster.NewTrainer(nc, cluster.TrainerOptions{
		Run: runfolder.Folder(runDir), Name: name, Games: games.Builtin(),
		MaxStale: *c.maxStale, Version: versionLine(), Log: io.out,
	})
	if err != nil {
		nc.Close()
		stopServer()
		return nil, nil, err
	}
	wctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	if *c.localWorkers != 0 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			workers := *c.localWorkers
			if workers < 0 {
				workers = 0 // as the config says: decided when the worker reads it
				if cfg, err := loop.LoadConfig(runfolder.Folder(runDir).Config(), games.Builtin()); err == nil {
					workers = cfg.SelfPlay.Workers
				}
			}
			err := cluster.RunWorker(wctx, nc, cluster.WorkerOptions{
				Name: name, Games: games.Builtin(), Workers: workers, ID: "local", Backend: backend,
				Version: versionLine(), Seed: uint64(time.Now().UnixNano()),
			})
			if err != nil && wctx.Err() == nil {
				io.err.Write([]byte("flipzero loop: local workers: " + oneLine(err) + "\n"))
			}
		}()
	}
	stop := func() {
		cancel()
		wg.Wait()
		nc.Close()
		stopServer()
	}
	return trainer, stop, nil
}
