package cluster

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"reflect"
	"testing"

	"github.com/flipzero/flipzero/data"
	"github.com/flipzero/flipzero/env/tictactoe"
)

// FuzzDecodeShardMessage decodes messages whose header is arbitrary bytes
// before a well-formed shard, as anyone who can publish on the run's
// subject could send: nothing may panic; a refusal says so; a message
// accepted has a header whose counts agree with each other and with the
// samples, and encodes and decodes back to the same header and samples.
func FuzzDecodeShardMessage(f *testing.F) {
	g := tictactoe.Game{}
	h, samples := goodShard(f, "run", 3)
	h.Samples = len(samples)
	head, err := json.Marshal(h)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(head)
	h.Games, h.Results, h.Records = 2, [3]int{1, 0, 1}, append(h.Records, "a1;b1\tdraw\ttictactoe")
	if head, err = json.Marshal(h); err != nil {
		f.Fatal(err)
	}
	f.Add(head)
	shard, err := data.EncodeShard(g, samples)
	if err != nil {
		f.Fatal(err)
	}
	accepted := 0
	f.Fuzz(func(t *testing.T, head []byte) {
		msg := binary.LittleEndian.AppendUint32([]byte(wireMagic), uint32(len(head)))
		msg = append(append(msg, head...), shard...)
		h, rest, err := decodeHeader(msg)
		if err == nil {
			var got []data.Sample
			if got, err = decodeSamples(h, rest, g); err == nil {
				checkAccepted(t, h, got)
				accepted++
				return
			}
		}
		if !errors.Is(err, errRefused) {
			t.Fatalf("error %v, want a refusal", err)
		}
	})
	// The seeds, run as a test, are messages a worker sends.
	if fuzzing := flag.Lookup("test.fuzz").Value.String() != ""; !fuzzing && accepted != 2 {
		f.Errorf("%d of the 2 seeds accepted", accepted)
	}
}

// checkAccepted checks what decodeHeader and decodeSamples promise of a
// message they accept, and that it survives a second trip.
func checkAccepted(t *testing.T, h ShardHeader, samples []data.Sample) {
	t.Helper()
	switch {
	case h.Format != Format || h.Samples != len(samples) || h.Samples > MaxSamples:
		t.Fatalf("accepted format %d with %d samples, header saying %d", h.Format, len(samples), h.Samples)
	case len(h.Records) != h.Games || h.Results[0]+h.Results[1]+h.Results[2] != h.Games || h.Games < 1:
		t.Fatalf("accepted %d games with %d records and results %v", h.Games, len(h.Records), h.Results)
	case h.FalseResign > h.NoResign || h.Resigned > h.Games || h.Forked < 0 || h.Forked > h.Games:
		t.Fatalf("accepted resignations %d, %d played out, %d false, %d forked", h.Resigned, h.NoResign, h.FalseResign, h.Forked)
	}
	msg, err := encodeShard(h, tictactoe.Game{}, samples)
	if err != nil {
		t.Fatalf("an accepted message does not encode: %v", err)
	}
	h2, rest, err := decodeHeader(msg)
	if err != nil {
		t.Fatalf("an accepted message encoded is refused: %v", err)
	}
	samples2, err := decodeSamples(h2, rest, tictactoe.Game{})
	if err != nil {
		t.Fatalf("an accepted message's samples encoded are refused: %v", err)
	}
	if !reflect.DeepEqual(h2, h) || !reflect.DeepEqual(samples2, samples) {
		t.Fatalf("a second trip changed the message: %+v, then %+v", h, h2)
	}
}
