package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/flipzero/flipzero/loop"
	"github.com/flipzero/flipzero/runfolder"
)

// fakeRun makes a run folder with the tic-tac-toe config and one
// generation's metrics, all that the run's page needs to start.
func fakeRun(t *testing.T) string {
	t.Helper()
	dir := runfolder.Folder(t.TempDir())
	raw, err := os.ReadFile("../../configs/tictactoe.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := dir.Create(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dir.Config(), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := loop.AppendMetrics(dir.Metrics(), loop.GenerationMetrics{Generation: 1, Games: 10, Steps: 3, PolicyLoss: 2, ValueLoss: 1}); err != nil {
		t.Fatal(err)
	}
	return string(dir)
}

// TestServeRun serves a run's page alone: it prints its address, answers
// the run's API, and stops with exit status 0 when told to.
func TestServeRun(t *testing.T) {
	dir := fakeRun(t)
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	pr, pw := io.Pipe()
	var errOut bytes.Buffer
	exit := make(chan int, 1)
	go func() {
		code := run(ctx, []string{"serve", "--run", dir, "--addr", "127.0.0.1:0"}, stdio{strings.NewReader(""), pw, &errOut})
		pw.Close()
		exit <- code
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatalf("no address printed: %v", err)
	}
	go io.Copy(io.Discard, pr)
	url := regexp.MustCompile(`http://\S+/run`).FindString(line)
	if url == "" || strings.Contains(line, "plays") {
		t.Fatalf("first line %q", line)
	}
	res, err := http.Get(strings.TrimSuffix(url, "/run") + "/api/run")
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Game    string
		Metrics []loop.GenerationMetrics
	}
	err = json.NewDecoder(res.Body).Decode(&v)
	res.Body.Close()
	if err != nil || v.Game != "tictactoe" || len(v.Metrics) != 1 {
		t.Fatalf("/api/run: %+v, %v", v, err)
	}
	// The play page is not served without a model.
	if res, err := http.Get(strings.TrimSuffix(url, "/run") + "/api/state"); err != nil || res.StatusCode != http.StatusNotFound {
		t.Errorf("/api/state without a model: %v %v", res.Status, err)
	}
	stop()
	select {
	case code := <-exit:
		if code != 0 {
			t.Errorf("exit %d: %s", code, errOut.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the server did not stop")
	}
}

// TestServeRunUsageErrors: a folder that is not a run, or no page to
// serve, is bad usage: exit status 2 and one line on standard error.
func TestServeRunUsageErrors(t *testing.T) {
	notRun := t.TempDir()
	for _, args := range [][]string{
		{"serve"},
		{"serve", "--run", notRun},
		{"serve", "--run", filepath.Join(notRun, "missing")},
		{"serve", "--run", fakeRun(t), "--model", filepath.Join(notRun, "missing.fznet")},
		{"serve", "--run", fakeRun(t), "--addr", "256.0.0.1:80"},
	} {
		code, out, errOut := runCLI(t, "", args...)
		if code != 2 || strings.Count(errOut, "\n") != 1 || out != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want 2 and one line on standard error", args, code, out, errOut)
		}
	}
}
