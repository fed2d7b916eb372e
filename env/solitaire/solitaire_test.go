package solitaire

import (
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/env/envtest"
)

func TestConformance(t *testing.T) {
	for _, g := range []Game{Default(), DefaultSum()} {
		t.Run(g.Name(), func(t *testing.T) { envtest.Run(t, g, envtest.Options{Seed: 7}) })
	}
}

// build makes a position from 8 rows: '.' empty, 'g'/'b' discs, '#' a
// face-down token, 'G'/'B' a face-up token showing gold/black. The
// face-down pool has a gold face for the first '#' token, a black one for
// the second, and so on.
func build(t *testing.T, rows ...string) *State {
	t.Helper()
	var text strings.Builder
	text.WriteString("scoring count\nboard\n")
	var faces []Face
	var up [64]byte
	hiddenTokens := 0
	for r, row := range rows {
		for c := 0; c < 8; c++ {
			ch := row[c]
			switch ch {
			case '#':
				hiddenTokens++
			case 'G', 'B':
				up[8*r+c] = ch
				faces = append(faces, Face{Gold: ch == 'G'})
				ch = '#'
			}
			if ch == '#' {
				ch = 't'
			}
			text.WriteByte(ch)
		}
		text.WriteByte('\n')
	}
	for i := 0; i < hiddenTokens; i++ {
		faces = append(faces, Face{Gold: i%2 == 0})
	}
	// The layout lists as many faces as tokens; which token gets which
	// face is set below.
	for _, f := range faces {
		if f.Gold {
			text.WriteString("gold 1\n")
		} else {
			text.WriteString("black 1\n")
		}
	}
	l, err := ParseLayout("test", text.String())
	if err != nil {
		// A position with no legal placement is still worth building.
		if !strings.Contains(err.Error(), "no legal placement") {
			t.Fatal(err)
		}
		l = rawLayout(t, text.String())
	}
	s := New(l).NewState().(*State)
	for sq, ch := range up {
		if ch == 0 {
			continue
		}
		k := slices.Index(s.r.kinds, Face{Gold: ch == 'G'})
		if ch == 'B' {
			s.upBlack |= 1 << sq
		} else {
			s.upGold |= 1 << sq
		}
		s.face[sq] = uint8(k)
		s.hidden[k]--
		s.hiddenTotal--
	}
	s.update()
	return s
}

// rawLayout parses a layout without the start-position check.
func rawLayout(t *testing.T, text string) Layout {
	t.Helper()
	l, err := ParseLayout("test", strings.Replace(text, "board\n", "board\n", 1)+"")
	if err == nil {
		return l
	}
	// Build it by hand: the parse failed only on the start check.
	var out Layout
	rows := strings.Split(text, "\n")[2:10]
	for r, row := range rows {
		for c := 0; c < 8; c++ {
			bit := uint64(1) << (8*r + c)
			switch row[c] {
			case 't':
				out.Tokens |= bit
			case 'g':
				out.Gold |= bit
			case 'b':
				out.Black |= bit
			}
		}
	}
	for _, line := range strings.Split(text, "\n")[10:] {
		if line != "" {
			out.Faces = append(out.Faces, Face{Gold: strings.HasPrefix(line, "gold")})
		}
	}
	return out
}

func act(t *testing.T, s *State, move string) {
	t.Helper()
	a, err := env.ParseLegal(s, move)
	if err != nil {
		t.Fatalf("%s: %v in\n%v", move, err, s)
	}
	s.Apply(a)
}

func TestRules(t *testing.T) {
	const empty = "........"
	tests := []struct {
		name  string
		rows  []string
		moves string
		// illegal is a placement that must be refused before moves.
		illegal string
		// After the moves: the board as String draws its rows, the
		// tokens captured, whether a reveal is due, and whether the game
		// is over.
		want     []string
		captured int
		chance   bool
		over     bool
	}{
		{
			name: "a placement that only captures is legal",
			rows: []string{"gB......", "b.......", "#.......", empty, empty, empty, empty, ".......g"},
			// c1: gold outflanks the face-up black token b1 against a1.
			moves: "c1:gold",
			want:  []string{"g.g.....", "b.......", "#......."},
			// c1 has no token orthogonally next to it: no reveal, and
			// nothing is left to place.
			captured: 1,
			over:     true,
		},
		{
			name:    "a token of the placed colour is not captured",
			rows:    []string{"gG......", "bb......", "#.......", empty, empty, empty, empty, "......bg"},
			illegal: "c1:gold",
			want:    []string{"gG......", "bb......"},
		},
		{
			name:    "a line of two tokens is not captured",
			rows:    []string{"gBB.....", "#.......", "b.......", empty, empty, empty, empty, "......bg"},
			illegal: "d1:gold",
			moves:   "",
			want:    []string{"gBB.....", "#......."},
		},
		{
			name:    "a face-down token is not captured",
			rows:    []string{"g#......", "#.......", "b.......", empty, empty, empty, empty, "......bg"},
			illegal: "c1:gold",
			want:    []string{"g#......"},
		},
		{
			name:    "no placement on a token",
			rows:    []string{"gBg.....", "........", "b.......", empty, empty, empty, empty, "......bg"},
			illegal: "b1:black",
		},
		{
			name: "one disc captures single tokens in several directions and flips",
			rows: []string{
				"g.g.g...",
				".BBB....",
				"gB.bg...",
				".B.B....",
				"g.g.g...",
				empty, empty, ".#.....b"},
			// c3: gold flips d3 and takes the tokens b2, c2, d2, b3, b4, d4
			// (each single, with a gold disc behind).
			moves:    "c3:gold",
			want:     []string{"g.g.g...", "........", "g.ggg...", "........", "g.g.g..."},
			captured: 6,
			over:     true,
		},
		{
			name: "neighbours turn up orthogonally, not diagonally",
			rows: []string{empty, "##......", ".bg.....", ".#......", empty, empty, empty, "......bg"},
			// a3 turns up a2 but not b2 or b4.
			moves: "a3:gold;reveal:gold",
			want:  []string{empty, "G#......", "ggg.....", ".#......"},
		},
		{
			name:   "a placement next to face-down tokens is a chance node",
			rows:   []string{"........", ".#......", "#.bg....", ".#......", empty, empty, empty, "......bg"},
			moves:  "b3:gold",
			want:   []string{"........", ".?......", "?ggg....", ".?......"},
			chance: true,
		},
		{
			name:  "the reveals come lowest square first and decide the faces",
			rows:  []string{"........", ".#......", "#.bg....", ".#......", empty, empty, empty, "......bg"},
			moves: "b3:gold;reveal:black;reveal:gold;reveal:gold",
			// b2, then a3, then b4.
			want: []string{"........", ".B......", "Gggg....", ".G......"},
		},
		{
			name:     "capturing the last token ends the game",
			rows:     []string{"gB......", "........", "b.......", empty, empty, empty, empty, "......bg"},
			moves:    "c1:gold",
			captured: 1,
			over:     true,
		},
		{
			name: "no placement for either colour ends the game",
			rows: []string{"g.......", "........", "........", "...#....", empty, empty, empty, "b......."},
			over: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := build(t, tt.rows...)
			if tt.illegal != "" {
				if _, err := env.ParseLegal(s, tt.illegal); err == nil {
					t.Fatalf("%s accepted in\n%v", tt.illegal, s)
				}
			}
			if tt.moves != "" {
				if err := env.PlayOn(s, tt.moves); err != nil {
					t.Fatalf("%v in\n%v", err, s)
				}
			}
			lines := strings.Split(s.String(), "\n")
			for r, want := range tt.want {
				got := strings.ReplaceAll(lines[1+r][2:], " ", "")
				if got != want {
					t.Errorf("row %d = %s, want %s in\n%v", r+1, got, want, s)
				}
			}
			if s.Captured() != tt.captured {
				t.Errorf("captured %d, want %d", s.Captured(), tt.captured)
			}
			if s.IsChance() != tt.chance {
				t.Errorf("chance node %v, want %v", s.IsChance(), tt.chance)
			}
			if s.Terminal() != tt.over {
				t.Errorf("over %v, want %v in\n%v", s.Terminal(), tt.over, s)
			}
		})
	}
}

// naiveLegal lists the legal placements by walking every direction from
// every empty square: an independent reading of the rules to check the
// bitboards against.
func naiveLegal(s *State) []int {
	at := func(r, c int) (disc int, token, upGold, upBlack bool, ok bool) {
		if r < 0 || r > 7 || c < 0 || c > 7 {
			return -1, false, false, false, false
		}
		bit := uint64(1) << (8*r + c)
		disc = -1
		if s.gold&bit != 0 {
			disc = colourGold
		} else if s.black&bit != 0 {
			disc = colourBlack
		}
		return disc, s.tokens&bit != 0, s.upGold&bit != 0, s.upBlack&bit != 0, true
	}
	var out []int
	if s.tokens == 0 || s.pending != 0 {
		return nil
	}
	for sq := 0; sq < 64; sq++ {
		r0, c0 := sq/8, sq%8
		if d, tok, _, _, _ := at(r0, c0); d >= 0 || tok {
			continue
		}
		for colour := 0; colour < 2; colour++ {
			legal := false
			for dr := -1; dr <= 1; dr++ {
				for dc := -1; dc <= 1; dc++ {
					if dr == 0 && dc == 0 {
						continue
					}
					// Outflanking discs.
					n := 0
					r, c := r0+dr, c0+dc
					for {
						d, _, _, _, ok := at(r, c)
						if !ok || d != 1-colour {
							break
						}
						n++
						r, c = r+dr, c+dc
					}
					if d, _, _, _, ok := at(r, c); ok && n > 0 && d == colour {
						legal = true
					}
					// Capturing one face-up token of the other colour.
					_, tok, ug, ub, ok := at(r0+dr, c0+dc)
					other := ub
					if colour == colourBlack {
						other = ug
					}
					if d, _, _, _, ok2 := at(r0+2*dr, c0+2*dc); ok && ok2 && tok && other && d == colour {
						legal = true
					}
				}
			}
			if legal {
				out = append(out, 2*sq+colour)
			}
		}
	}
	return out
}

// naivePlace places a disc of colour on sq by walking the directions:
// the discs of each colour, the tokens left and the tokens turning up
// afterwards.
func naivePlace(s *State, sq, colour int) (gold, black, tokens, pending uint64) {
	own, opp, capturable := s.gold, s.black, s.upBlack
	if colour == colourBlack {
		own, opp, capturable = s.black, s.gold, s.upGold
	}
	bitAt := func(r, c int) uint64 {
		if r < 0 || r > 7 || c < 0 || c > 7 {
			return 0
		}
		return 1 << (8*r + c)
	}
	r0, c0 := sq/8, sq%8
	newOwn, newOpp := own|1<<sq, opp
	for dr := -1; dr <= 1; dr++ {
		for dc := -1; dc <= 1; dc++ {
			if dr == 0 && dc == 0 {
				continue
			}
			var line uint64
			r, c := r0+dr, c0+dc
			for bitAt(r, c)&opp != 0 {
				line |= bitAt(r, c)
				r, c = r+dr, c+dc
			}
			if bitAt(r, c)&own != 0 {
				newOwn |= line
				newOpp &^= line
			}
		}
	}
	tokens = s.tokens
	for dr := -1; dr <= 1; dr++ {
		for dc := -1; dc <= 1; dc++ {
			next := bitAt(r0+dr, c0+dc)
			if (dr != 0 || dc != 0) && next&capturable != 0 && bitAt(r0+2*dr, c0+2*dc)&newOwn != 0 {
				tokens &^= next
			}
		}
	}
	faceDown := tokens &^ (s.upGold | s.upBlack)
	pending = (bitAt(r0-1, c0) | bitAt(r0+1, c0) | bitAt(r0, c0-1) | bitAt(r0, c0+1)) & faceDown
	if colour == colourBlack {
		return newOpp, newOwn, tokens, pending
	}
	return newOwn, newOpp, tokens, pending
}

func TestApplyAgainstNaive(t *testing.T) {
	buf := make([]int, 0, Default().ActionSpace())
	placed, capturing := 0, 0
	for _, p := range env.RandomPositions(Default(), 2000, 13, false) {
		s := p.(*State)
		if s.IsChance() {
			continue
		}
		for _, a := range s.LegalActions(buf) {
			c := *s
			c.Apply(a)
			g, b, tok, pend := naivePlace(s, a/2, a%2)
			if c.gold != g || c.black != b || c.tokens != tok || c.pending != pend {
				t.Fatalf("%s gives\n%v\nwant gold %x black %x tokens %x pending %x, from\n%v", Default().FormatAction(a), &c, g, b, tok, pend, s)
			}
			if c.Captured()-s.Captured() != bits.OnesCount64(s.tokens&^tok) {
				t.Fatalf("%s: captured count %d → %d, tokens taken %d", Default().FormatAction(a), s.Captured(), c.Captured(), bits.OnesCount64(s.tokens&^tok))
			}
			placed++
			if tok != s.tokens {
				capturing++
			}
		}
	}
	if placed < 5000 || capturing < 100 {
		t.Fatalf("only %d placements checked, %d of them capturing", placed, capturing)
	}
}

func TestLegalAgainstNaive(t *testing.T) {
	buf := make([]int, 0, Default().ActionSpace())
	checked := 0
	for _, p := range env.RandomPositions(Default(), 3000, 11, true) {
		s := p.(*State)
		if s.IsChance() {
			continue
		}
		checked++
		if got, want := s.LegalActions(buf), naiveLegal(s); !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
			t.Fatalf("legal %v, want %v in\n%v", got, want, s)
		}
	}
	if checked < 1000 {
		t.Fatalf("only %d decision positions checked", checked)
	}
}

// TestPerft counts, from the start, every placement and every reveal
// outcome (each face kind once, whatever its chance) as one ply; a
// finished game is one leaf at every deeper depth. Depth 1 is Reversi's
// four openings per colour. Depth 2: each gold opening turns up two
// tokens, the first with 2 outcomes under count scoring and 22 face kinds
// under sum scoring, and each black opening turns up none and leaves 6
// placements: 4·2 + 4·6 = 32 and 4·22 + 4·6 = 112.
func TestPerft(t *testing.T) {
	tests := []struct {
		game Game
		want []uint64
	}{
		{Default(), []uint64{8, 32, 56, 152, 748, 2204, 6468, 24236}},
		{DefaultSum(), []uint64{8, 112, 2216, 16712, 187084}},
	}
	for _, tt := range tests {
		for d, want := range tt.want {
			if got := env.Perft(tt.game.NewState(), d+1); got != want {
				t.Errorf("%s perft(%d) = %d, want %d", tt.game.Name(), d+1, got, want)
			}
		}
	}
}

func TestNotation(t *testing.T) {
	tests := []struct {
		game    Game
		text    string
		want    int
		wantErr bool
	}{
		{Default(), "a1:gold", 0, false},
		{Default(), "a1:black", 1, false},
		{Default(), "f5:gold", 2*37 + 0, false},
		{Default(), " C3:Black ", 2*18 + 1, false},
		{Default(), "h8:black", 127, false},
		{Default(), "reveal:gold", Reveal, false},
		{Default(), "reveal:black", Reveal + 1, false},
		{DefaultSum(), "reveal:gold-blank", Reveal, false},
		{DefaultSum(), "reveal:gold-7", Reveal + 7, false},
		{DefaultSum(), "reveal:black-10", Reveal + 21, false},
		{Default(), "reveal:gold-7", 0, true},
		{DefaultSum(), "reveal:gold", 0, true},
		{DefaultSum(), "reveal:gold-11", 0, true},
		{Default(), "f5", 0, true},
		{Default(), "f5:white", 0, true},
		{Default(), "i5:gold", 0, true},
		{Default(), "pass", 0, true},
		{Default(), "reveal:", 0, true},
		{Default(), ":gold", 0, true},
		{Default(), "f5:gold:gold", 0, true},
	}
	for _, tt := range tests {
		got, err := tt.game.ParseAction(tt.text)
		if tt.wantErr {
			if err == nil {
				t.Errorf("%s: %q parsed as %d, want an error", tt.game.Name(), tt.text, got)
			} else if strings.Contains(err.Error(), "\n") {
				t.Errorf("error on more than one line: %q", err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("%s: %q = %d, %v; want %d", tt.game.Name(), tt.text, got, err, tt.want)
			continue
		}
		if back := tt.game.FormatAction(got); back != strings.ToLower(strings.TrimSpace(tt.text)) {
			t.Errorf("%d formats as %q, want %q", got, back, tt.text)
		}
	}
}

// TestRecordReplays plays a random game, writes it as a record and plays
// the record back: the reveals in it make the deal repeatable.
func TestRecordReplays(t *testing.T) {
	for _, g := range []Game{Default(), DefaultSum()} {
		rng := rand.New(rand.NewPCG(3, 4))
		r := env.NewRandom(g, rng)
		s := g.NewState()
		var moves []string
		for !s.Terminal() {
			a := r.Action(s)
			moves = append(moves, g.FormatAction(a))
			s.Apply(a)
		}
		back, err := env.Play(g, strings.Join(moves, ";"))
		if err != nil {
			t.Fatal(err)
		}
		if back.String() != s.String() || !back.Terminal() {
			t.Fatalf("replay ends in\n%v\nwant\n%v", back, s)
		}
		if got, want := env.ResultName(back), fmt.Sprintf("score %g", s.(*State).Score()); got != want {
			t.Errorf("result %q, want %q", got, want)
		}
	}
}

func TestDefaultLayout(t *testing.T) {
	l := DefaultLayout()
	if n := bits.OnesCount64(l.Tokens); n != 24 || len(l.Faces) != 24 {
		t.Fatalf("%d tokens, %d faces; want 24", n, len(l.Faces))
	}
	gold, blanks, sum := 0, 0, 0
	for _, f := range l.Faces {
		if f.Gold {
			gold++
		}
		if f.Number == 0 {
			blanks++
		}
		sum += f.Number
	}
	if gold != 12 || blanks != 4 || sum != 110 {
		t.Errorf("%d gold faces, %d blanks, numbers summing to %d; want 12, 4, 110", gold, blanks, sum)
	}
	if corners := uint64(1) | 1<<7 | 1<<56 | 1<<63; l.Tokens&corners != 0 {
		t.Errorf("a token in a corner, where it can never be captured")
	}
	center := uint64(1)<<27 | 1<<28 | 1<<35 | 1<<36
	if l.Tokens&(l.Gold|l.Black) != 0 || l.Gold|l.Black != center {
		t.Errorf("start discs %x %x, want the four central squares", l.Gold, l.Black)
	}
	var names []string
	for _, s := range Default().Symmetries() {
		names = append(names, s.Name)
	}
	if want := []string{"identity", "rot180", "transpose", "anti-transpose"}; !slices.Equal(names, want) {
		t.Errorf("symmetries %v, want %v", names, want)
	}
	s := Default().NewState().(*State)
	if s.MaxScore() != 24 || DefaultSum().NewState().(*State).MaxScore() != 220 {
		t.Errorf("max scores %v and %v, want 24 and 220", s.MaxScore(), DefaultSum().NewState().(*State).MaxScore())
	}
	if env.Players(Default()) != 1 {
		t.Errorf("not a one-player game")
	}
}

func TestScore(t *testing.T) {
	s := DefaultSum().NewState().(*State)
	tests := []struct {
		sum, blanks int
		want        float64
	}{
		{0, 0, 0}, {17, 3, 17}, {17, 4, 34}, {110, 4, 220},
	}
	for _, tt := range tests {
		s.capturedSum, s.capturedBlanks = uint16(tt.sum), uint8(tt.blanks)
		if got := s.Score(); got != tt.want {
			t.Errorf("sum %d with %d blanks scores %v, want %v", tt.sum, tt.blanks, got, tt.want)
		}
	}
	end := build(t, "gB......", "........", "b.......", "........", "........", "........", "........", "......bg")
	act(t, end, "c1:gold")
	if v := env.Value(end, 0); v != 1 {
		t.Errorf("value of capturing every token %v, want 1", v)
	}
}

func TestLayoutErrors(t *testing.T) {
	good := "board\n" + strings.Repeat("........\n", 3) + "...bg...\n...gbt..\n" + strings.Repeat("........\n", 3) + "gold 3\nscoring count\n"
	if _, err := ParseLayout("f", good); err != nil {
		t.Fatalf("a good layout: %v", err)
	}
	tests := []struct {
		name, text, want string
	}{
		{"no board", "gold 1\nscoring count\n", "f:2: no board"},
		{"short board", "board\n........\n", "f:1: the board has 1 rows"},
		{"short row", "board\n.......\n", "f:2: board row 1 has 7 cells"},
		{"bad cell", "board\nx.......\n", "f:2: board row 1: cell 'x'"},
		{"bad number", strings.Replace(good, "gold 3", "gold 51", 1), "f:10: token \"51\""},
		{"bad word", strings.Replace(good, "gold 3", "gold three", 1), "f:10: token \"three\""},
		{"too few faces", strings.Replace(good, "gold 3", "gold", 1), "the board has 1 tokens but the token lines list 0 faces"},
		{"too many faces", strings.Replace(good, "gold 3", "gold 3 4", 1), "the board has 1 tokens but the token lines list 2 faces"},
		{"bad scoring", strings.Replace(good, "scoring count", "scoring most", 1), "f:11: want \"scoring count\""},
		{"no scoring", strings.Replace(good, "scoring count", "", 1), "no scoring line"},
		{"two boards", good + "board\n", "a second board"},
		{"unknown", "colour gold\n", "f:1: unknown keyword \"colour\""},
		{"no token", strings.Replace(strings.Replace(good, "gbt", "gb.", 1), "gold 3\n", "", 1), "no token"},
		{"sum of blanks", strings.Replace(strings.Replace(good, "gold 3", "gold blank", 1), "count", "sum", 1), "no numbered token"},
		{"corner token", strings.Replace(good, "........\ngold", ".......t\ngold", 1) + "black 1\n", "f:1: a token in corner h8 can never be captured"},
		{"stuck start", "board\n" + strings.Repeat("........\n", 3) + "...g....\n.....t..\n" + strings.Repeat("........\n", 3) + "gold 3\nscoring count\n", "no legal placement"},
	}
	for _, tt := range tests {
		_, err := ParseLayout("f", tt.text)
		if err == nil {
			t.Errorf("%s: accepted", tt.name)
			continue
		}
		if !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "layout f:") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %q, want one line starting \"layout f:\" containing %q", tt.name, err, tt.want)
		}
	}
}

func FuzzParseLayout(f *testing.F) {
	f.Add(defaultLayout)
	f.Add("board\n........\nscoring sum\n")
	f.Fuzz(func(t *testing.T, text string) {
		l, err := ParseLayout("fuzz", text)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error on more than one line: %q", err)
			}
			return
		}
		g := New(l)
		s := g.NewState()
		if s.Terminal() || len(s.LegalActions(nil)) == 0 {
			t.Fatalf("an accepted layout with no placement at the start")
		}
	})
}

func FuzzParseAction(f *testing.F) {
	for _, s := range []string{"f5:gold", "c3:black", "reveal:gold", "reveal:black-blank", "reveal:gold-10", "pass", ""} {
		f.Add(s)
	}
	games := []Game{Default(), DefaultSum()}
	f.Fuzz(func(t *testing.T, text string) {
		for _, g := range games {
			a, err := g.ParseAction(text)
			if err != nil {
				continue
			}
			if a < 0 || a >= g.ActionSpace() {
				t.Fatalf("%q parses as %d, outside the action space", text, a)
			}
			if back, err := g.ParseAction(g.FormatAction(a)); err != nil || back != a {
				t.Fatalf("%q -> %d -> %q -> %d, %v", text, a, g.FormatAction(a), back, err)
			}
		}
	})
}

func TestSolveExact(t *testing.T) {
	tests := []struct {
		name string
		rows []string
		want float64
	}{
		{
			// The only placements: c1 gold captures b1 and ends the game;
			// c1 black flips nothing and is illegal.
			name: "one capture",
			rows: []string{"gB......", "........", "b.......", "........", "........", "........", "........", "......bg"},
			want: 1,
		},
		{
			// a3 gold (flipping a2) turns up a4, gold or black with
			// even odds (g8 is out of reach). Black: a5 gold captures it against a3 (score
			// 1). Gold: it can be captured only by a black disc, with a
			// black disc behind it, which no placement makes.
			name: "a coin flip",
			rows: []string{"g.......", "b.......", "........", "#.......", "........", "........", "........", "......#."},
			want: 0.5,
		},
	}
	for _, tt := range tests {
		s := build(t, tt.rows...)
		if got := SolveExact(s); got != tt.want {
			t.Errorf("%s: %v, want %v in\n%v", tt.name, got, tt.want, s)
		}
	}
}

func BenchmarkLegalActions(b *testing.B) {
	positions := env.RandomPositions(Default(), 1000, 1, false)
	buf := make([]int, 0, Default().ActionSpace())
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		buf = positions[i%len(positions)].LegalActions(buf)
	}
}

func BenchmarkApply(b *testing.B) {
	positions := env.RandomPositions(Default(), 1000, 1, false)
	buf := make([]int, 0, Default().ActionSpace())
	s := Default().NewState()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		p := positions[i%len(positions)]
		legal := p.LegalActions(buf)
		s.CopyFrom(p)
		s.Apply(legal[i%len(legal)])
	}
}

func BenchmarkRandomGame(b *testing.B) {
	g := Default()
	r := env.NewRandom(g, rand.New(rand.NewPCG(1, 2)))
	s := g.NewState()
	start := g.NewState()
	b.ReportAllocs()
	plies := 0
	for b.Loop() {
		s.CopyFrom(start)
		for !s.Terminal() {
			s.Apply(r.Action(s))
			plies++
		}
	}
	b.ReportMetric(float64(plies)/float64(b.N), "plies/game")
}

// Games played on one deal turn up the same face on the same square
// whatever the placements, every dealt face is legal when it turns up,
// and the faces turned up over many deals follow the token set.
func TestDeal(t *testing.T) {
	g := DefaultSum()
	rng := rand.New(rand.NewPCG(8, 9))
	random := env.NewRandom(g, rng)
	blanks, reveals := 0, 0
	for deal := 0; deal < 200; deal++ {
		d := NewDeal(g, rng)
		seen := map[int]int{}
		for game := 0; game < 3; game++ {
			s := g.NewState().(*State)
			for !s.Terminal() {
				if !s.IsChance() {
					s.Apply(random.Action(s))
					continue
				}
				a, ok := d.Outcome(s)
				if !ok || !s.IsLegal(a) {
					t.Fatalf("deal %d: dealt face %d not legal in\n%v", deal, a, s)
				}
				sq := bits.TrailingZeros64(s.pending)
				if prev, ok := seen[sq]; ok && prev != a {
					t.Fatalf("deal %d: %s shows %s in one game, %s in another", deal, SquareName(sq), g.FormatAction(prev), g.FormatAction(a))
				}
				seen[sq] = a
				reveals++
				if g.r.kinds[a-Reveal].Number == 0 {
					blanks++
				}
				s.Apply(a)
			}
		}
		if _, ok := d.Outcome(g.NewState().(*State)); ok {
			t.Fatal("a deal answers a decision node")
		}
	}
	// 4 blanks among 24 faces.
	if f := float64(blanks) / float64(reveals); math.Abs(f-4.0/24) > 0.02 {
		t.Errorf("blanks are %.3f of the faces turned up, want about %.3f", f, 4.0/24)
	}
}
