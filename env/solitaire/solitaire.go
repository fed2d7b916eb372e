// Package solitaire is the Ravensburger rulebook's one-player Reversi:
// one player places gold and black discs among 24 face-down tokens,
// turning tokens up next to each placement and capturing single face-up
// tokens of the other colour. The faces that turn up are chance events;
// the result is a score. RULES.md gives the rules and the decisions the
// rulebook leaves open; default.layout is the default layout and token
// set, and a user's layout file of the same form makes another Game.
package solitaire

import (
	"fmt"
	"math/bits"
	"slices"
	"strconv"
	"strings"

	"github.com/flipzero/flipzero/env"
)

// Placements are actions 2*square + colour (0 gold, 1 black); reveal
// outcomes follow them, one per distinct face of the token set.
const (
	colourGold  = 0
	colourBlack = 1
	// Reveal is the first reveal action: Reveal+k turns up face kind k.
	Reveal = 128
)

// Encoding planes, 8×8 each.
const (
	planeGold = iota
	planeBlack
	planeHidden     // face-down tokens
	planeUpGold     // face-up tokens showing gold
	planeUpBlack    // face-up tokens showing black
	planeUpNumber   // a face-up token's number / the largest number
	planeUpBlank    // face-up blank tokens (they matter only when scoring sum)
	planePending    // tokens turning up now (at a chance node)
	planeHiddenGold // constant: share of the face-down tokens that show gold
	planeScore      // constant: score so far / MaxScore
	planeBlanksLeft // constant: share of the blanks still face down
	planes
)

// rules is everything a Game knows: the layout and what follows from it.
// It is built once per Game and never changed.
type rules struct {
	name   string
	layout Layout
	// kinds are the distinct faces in action order; under count scoring
	// the numbers play no part and a face is its colour alone.
	kinds     []Face
	kindNames []string
	maxNumber int
	blanks    int
	maxScore  float64
	syms      []env.Symmetry
	start     State
}

// Game is reversi-solitaire under one layout. Its only field is a
// pointer, so a Game in an env.Game interface costs no allocation.
type Game struct{ r *rules }

// Read-only: the default games, built once.
var defaultGame, defaultSumGame = func() (Game, Game) {
	l := DefaultLayout()
	sum := l
	sum.Sum = true
	return New(l), New(sum)
}()

// Default is reversi-solitaire with the default layout and the
// rulebook's scoring: the number of tokens captured.
func Default() Game { return defaultGame }

// DefaultSum is the default layout under the rulebook's variant scoring,
// reversi-solitaire-sum.
func DefaultSum() Game { return defaultSumGame }

// New returns the game of a layout (see ParseLayout): reversi-solitaire,
// or reversi-solitaire-sum when it scores the variant's sum.
func New(l Layout) Game {
	name := "reversi-solitaire"
	if l.Sum {
		name += "-sum"
	}
	return Game{newRules(name, l)}
}

// Load reads a layout file and returns its game.
func Load(path string) (Game, error) {
	l, err := LoadLayout(path)
	if err != nil {
		return Game{}, err
	}
	return New(l), nil
}

func newRules(name string, l Layout) *rules {
	r := &rules{name: name, layout: l}
	index := map[Face]int{}
	var counts []int
	for _, f := range l.Faces {
		if f.Number == 0 {
			r.blanks++
		}
		r.maxNumber = max(r.maxNumber, f.Number)
		r.maxScore += float64(f.Number)
		if !l.Sum {
			f.Number = 0
		}
		if _, ok := index[f]; !ok {
			index[f] = -1
		}
	}
	// Action order: gold before black, blank before the numbers.
	for _, gold := range []bool{true, false} {
		for n := 0; n <= maxNumber; n++ {
			f := Face{Gold: gold, Number: n}
			if _, ok := index[f]; ok {
				index[f] = len(r.kinds)
				r.kinds = append(r.kinds, f)
				counts = append(counts, 0)
				name := "black"
				if gold {
					name = "gold"
				}
				if l.Sum {
					name = f.String()
				}
				r.kindNames = append(r.kindNames, name)
			}
		}
	}
	for _, f := range l.Faces {
		if !l.Sum {
			f.Number = 0
		}
		counts[index[f]]++
	}
	if l.Sum {
		if r.blanks > 0 {
			r.maxScore *= 2
		}
	} else {
		r.maxScore = float64(len(l.Faces))
	}
	s := &r.start
	s.r = r
	s.gold, s.black, s.tokens = l.Gold, l.Black, l.Tokens
	for k, c := range counts {
		s.hidden[k] = uint8(c)
	}
	s.hiddenTotal = uint8(len(l.Faces))
	s.update()
	r.syms = buildSymmetries(l, Reveal+len(r.kinds))
	return r
}

// buildSymmetries keeps the symmetries of the square that map the tokens
// and both colours of start discs onto themselves.
func buildSymmetries(l Layout, actions int) []env.Symmetry {
	maps, names := env.SquareCellMaps(8)
	var syms []env.Symmetry
	for k, cell := range maps {
		if mapBoard(l.Tokens, cell) != l.Tokens || mapBoard(l.Gold, cell) != l.Gold || mapBoard(l.Black, cell) != l.Black {
			continue
		}
		action := make([]int, actions)
		for a := range action {
			action[a] = a
			if a < Reveal {
				action[a] = 2*cell[a/2] + a%2
			}
		}
		syms = append(syms, env.Symmetry{Name: names[k], Cell: cell, Action: action})
	}
	return syms
}

func mapBoard(b uint64, cell []int) uint64 {
	var out uint64
	for ; b != 0; b &= b - 1 {
		out |= 1 << cell[bits.TrailingZeros64(b)]
	}
	return out
}

func (g Game) Name() string        { return g.r.name }
func (g Game) NewState() env.State { s := g.r.start; return &s }
func (g Game) Solo() bool          { return true }
func (g Game) ActionSpace() int    { return Reveal + len(g.r.kinds) }
func (g Game) EncodedShape() (int, int, int) {
	return planes, 8, 8
}

// Symmetries are those of the square that map the layout and the start
// discs onto themselves; the reveal actions stay as they are. The slice is
// shared: callers must not change it.
func (g Game) Symmetries() []env.Symmetry { return g.r.syms }

// PlayerName names the one player, who plays both colours.
func (g Game) PlayerName(p env.Player) string { return "player" }

// Layout is the layout the game was made from.
func (g Game) Layout() Layout {
	l := g.r.layout
	l.Faces = slices.Clone(l.Faces)
	return l
}

// Faces are the distinct faces in the order of the reveal actions.
func (g Game) Faces() []Face { return append([]Face(nil), g.r.kinds...) }

// ParseSquare reads a square "a1".."h8" as 8*row + column.
func ParseSquare(text string) (int, error) {
	if len(text) != 2 {
		return 0, fmt.Errorf("bad square %q: want a1..h8", text)
	}
	col, row := text[0]|0x20, text[1]
	if col < 'a' || col > 'h' || row < '1' || row > '8' {
		return 0, fmt.Errorf("bad square %q: want a1..h8", text)
	}
	return int(row-'1')*8 + int(col-'a'), nil
}

// SquareName writes square s (0..63) as "a1".."h8".
func SquareName(s int) string {
	return string([]byte{byte('a' + s%8), byte('1' + s/8)})
}

// ParseAction reads "f5:gold", "c3:black", or a reveal outcome
// "reveal:gold" ("reveal:gold-7", "reveal:black-blank" when scoring sum).
func (g Game) ParseAction(text string) (int, error) {
	t := strings.ToLower(strings.TrimSpace(text))
	head, tail, ok := strings.Cut(t, ":")
	if !ok {
		return 0, fmt.Errorf("bad %s move %q: want a square and a colour such as f5:gold, or reveal:<face>", g.r.name, text)
	}
	if head == "reveal" {
		for k, name := range g.r.kindNames {
			if tail == name {
				return Reveal + k, nil
			}
		}
		return 0, fmt.Errorf("bad %s move %q: face %q is not one of %s", g.r.name, text, tail, strings.Join(g.r.kindNames, " "))
	}
	sq, err := ParseSquare(head)
	if err != nil {
		return 0, fmt.Errorf("bad %s move %q: want a square a1..h8 before the colon", g.r.name, text)
	}
	switch tail {
	case "gold":
		return 2*sq + colourGold, nil
	case "black":
		return 2*sq + colourBlack, nil
	}
	return 0, fmt.Errorf("bad %s move %q: colour %q is not gold or black", g.r.name, text, tail)
}

func (g Game) FormatAction(action int) string {
	switch {
	case action < 0 || action >= g.ActionSpace():
		return "?" + strconv.Itoa(action)
	case action >= Reveal:
		return "reveal:" + g.r.kindNames[action-Reveal]
	case action%2 == colourGold:
		return SquareName(action/2) + ":gold"
	default:
		return SquareName(action/2) + ":black"
	}
}

// State is a position. It is a value of fixed size: copying it copies the
// position.
type State struct {
	r *rules
	// Discs and tokens as bitboards. upGold and upBlack are the face-up
	// tokens by the colour they show; pending are the tokens turning up
	// now, revealed one chance event at a time, lowest square first.
	gold, black     uint64
	tokens          uint64
	upGold, upBlack uint64
	pending         uint64
	// moves are the legal placements of each colour; they are kept only
	// while no token is pending.
	moves [2]uint64
	// hidden counts the face-down tokens (pending ones included) by face
	// kind: the pool a turned-up token's face is drawn from.
	hidden      [maxKinds]uint8
	hiddenTotal uint8
	// face is the kind of the face-up token on each square.
	face [64]uint8

	captured, capturedBlanks uint8
	capturedSum              uint16
}

func (s *State) Game() env.Game         { return Game{s.r} }
func (s *State) ToMove() env.Player     { return 0 }
func (s *State) Clone() env.State       { c := *s; return &c }
func (s *State) CopyFrom(src env.State) { *s = *src.(*State) }

// update recomputes the legal placements once no token is pending.
func (s *State) update() {
	if s.pending != 0 {
		return
	}
	empty := ^(s.gold | s.black | s.tokens)
	s.moves[colourGold] = placements(s.gold, s.black, s.upBlack, empty)
	s.moves[colourBlack] = placements(s.black, s.gold, s.upGold, empty)
}

// IsChance reports whether a token is turning up: the next action is a
// reveal outcome, drawn from the face-down faces.
func (s *State) IsChance() bool { return s.pending != 0 }

func (s *State) ChanceOutcomes(buf []env.Outcome) []env.Outcome {
	buf = buf[:0]
	if s.pending == 0 {
		return buf
	}
	total := float64(s.hiddenTotal)
	for k := range s.r.kinds {
		if n := s.hidden[k]; n > 0 {
			buf = append(buf, env.Outcome{Action: Reveal + k, Prob: float64(n) / total})
		}
	}
	return buf
}

func (s *State) Terminal() bool {
	return s.tokens == 0 || s.pending == 0 && s.moves[0]|s.moves[1] == 0
}

func (s *State) LegalActions(buf []int) []int {
	buf = buf[:0]
	if s.Terminal() {
		return buf
	}
	if s.pending != 0 {
		for k := range s.r.kinds {
			if s.hidden[k] > 0 {
				buf = append(buf, Reveal+k)
			}
		}
		return buf
	}
	g, b := s.moves[colourGold], s.moves[colourBlack]
	for m := g | b; m != 0; m &= m - 1 {
		sq := bits.TrailingZeros64(m)
		if g>>sq&1 != 0 {
			buf = append(buf, 2*sq+colourGold)
		}
		if b>>sq&1 != 0 {
			buf = append(buf, 2*sq+colourBlack)
		}
	}
	return buf
}

func (s *State) IsLegal(action int) bool {
	if action < 0 || s.Terminal() {
		return false
	}
	if s.pending != 0 {
		k := action - Reveal
		return k >= 0 && k < len(s.r.kinds) && s.hidden[k] > 0
	}
	return action < Reveal && s.moves[action%2]>>(action/2)&1 != 0
}

func (s *State) Apply(action int) {
	if action >= Reveal {
		s.reveal(action - Reveal)
		return
	}
	bit := uint64(1) << (action / 2)
	own, opp, capturable := &s.gold, &s.black, s.upBlack
	if action%2 == colourBlack {
		own, opp, capturable = &s.black, &s.gold, s.upGold
	}
	// The rulebook: outflanked discs flip first, then the tokens the new
	// disc outflanks are taken, then its orthogonal neighbours turn up.
	f := flips(bit, *own, *opp)
	*own |= f | bit
	*opp &^= f
	for c := captures(bit, *own, capturable); c != 0; c &= c - 1 {
		sq := bits.TrailingZeros64(c)
		f := s.r.kinds[s.face[sq]]
		s.captured++
		if f.Number == 0 {
			s.capturedBlanks++
		}
		s.capturedSum += uint16(f.Number)
		sqBit := uint64(1) << sq
		s.tokens &^= sqBit
		s.upGold &^= sqBit
		s.upBlack &^= sqBit
	}
	s.pending = orthogonal(bit) & s.tokens &^ (s.upGold | s.upBlack)
	s.update()
}

// reveal turns up the lowest pending token with face kind k.
func (s *State) reveal(k int) {
	sq := bits.TrailingZeros64(s.pending)
	bit := uint64(1) << sq
	s.pending &^= bit
	s.face[sq] = uint8(k)
	if s.r.kinds[k].Gold {
		s.upGold |= bit
	} else {
		s.upBlack |= bit
	}
	s.hidden[k]--
	s.hiddenTotal--
	s.update()
}

// Winner is the player when every token was captured, and otherwise
// nobody: a one-player game's result is its Score.
func (s *State) Winner() env.Player {
	if s.tokens == 0 {
		return 0
	}
	return env.NoPlayer
}

// Score is the number of tokens captured, or under sum scoring the sum
// of their numbers, doubled once every blank is captured.
func (s *State) Score() float64 {
	if !s.r.layout.Sum {
		return float64(s.captured)
	}
	v := float64(s.capturedSum)
	if s.r.blanks > 0 && int(s.capturedBlanks) == s.r.blanks {
		v *= 2
	}
	return v
}

func (s *State) MaxScore() float64 { return s.r.maxScore }

// Captured is the number of tokens captured so far.
func (s *State) Captured() int { return int(s.captured) }

func (s *State) Encode(dst []float32) {
	const n = 64
	clear(dst[:planes*n])
	hidden := s.tokens &^ (s.upGold | s.upBlack)
	fill := func(p int, b uint64) {
		for ; b != 0; b &= b - 1 {
			dst[p*n+bits.TrailingZeros64(b)] = 1
		}
	}
	fill(planeGold, s.gold)
	fill(planeBlack, s.black)
	fill(planeHidden, hidden)
	fill(planeUpGold, s.upGold)
	fill(planeUpBlack, s.upBlack)
	fill(planePending, s.pending)
	for b := s.upGold | s.upBlack; b != 0; b &= b - 1 {
		sq := bits.TrailingZeros64(b)
		f := s.r.kinds[s.face[sq]]
		if !s.r.layout.Sum {
			continue
		}
		if f.Number == 0 {
			dst[planeUpBlank*n+sq] = 1
		} else {
			dst[planeUpNumber*n+sq] = float32(f.Number) / float32(s.r.maxNumber)
		}
	}
	var hiddenGold, hiddenBlanks int
	for k, f := range s.r.kinds {
		if f.Gold {
			hiddenGold += int(s.hidden[k])
		}
		if f.Number == 0 {
			hiddenBlanks += int(s.hidden[k])
		}
	}
	constant := func(p int, v float32) {
		for i := p * n; i < (p+1)*n; i++ {
			dst[i] = v
		}
	}
	if s.hiddenTotal > 0 {
		constant(planeHiddenGold, float32(hiddenGold)/float32(s.hiddenTotal))
	}
	constant(planeScore, float32(s.Score()/s.r.maxScore))
	if s.r.layout.Sum && s.r.blanks > 0 {
		constant(planeBlanksLeft, float32(hiddenBlanks)/float32(s.r.blanks))
	}
}

func (s *State) Transformed(i int) env.State {
	cell := s.r.syms[i].Cell
	t := *s
	t.gold, t.black, t.tokens = mapBoard(s.gold, cell), mapBoard(s.black, cell), mapBoard(s.tokens, cell)
	t.upGold, t.upBlack, t.pending = mapBoard(s.upGold, cell), mapBoard(s.upBlack, cell), mapBoard(s.pending, cell)
	t.moves = [2]uint64{mapBoard(s.moves[0], cell), mapBoard(s.moves[1], cell)}
	for sq := range s.face {
		t.face[cell[sq]] = s.face[sq]
	}
	return &t
}

// String draws the board ('g'/'b' discs, '#' a face-down token, '?' one
// turning up, 'G'/'B' a face-up token by its colour, with its number
// under sum scoring listed below) and the score.
func (s *State) String() string {
	var sb strings.Builder
	sb.WriteString("  a b c d e f g h\n")
	var faces []string
	for row := 0; row < 8; row++ {
		sb.WriteByte(byte('1' + row))
		for col := 0; col < 8; col++ {
			sq := 8*row + col
			bit := uint64(1) << sq
			c := byte('.')
			switch {
			case s.gold&bit != 0:
				c = 'g'
			case s.black&bit != 0:
				c = 'b'
			case s.pending&bit != 0:
				c = '?'
			case (s.upGold|s.upBlack)&bit != 0:
				c = 'B'
				if s.upGold&bit != 0 {
					c = 'G'
				}
				faces = append(faces, SquareName(sq)+"="+s.r.kindNames[s.face[sq]])
			case s.tokens&bit != 0:
				c = '#'
			}
			sb.WriteByte(' ')
			sb.WriteByte(c)
		}
		sb.WriteByte('\n')
	}
	if s.r.layout.Sum && len(faces) > 0 {
		sb.WriteString("face up: " + strings.Join(faces, " ") + "\n")
	}
	fmt.Fprintf(&sb, "captured %d, score %g of %g, %d face down", s.captured, s.Score(), s.r.maxScore, s.hiddenTotal)
	if s.pending != 0 {
		sb.WriteString(", turning up")
	}
	return sb.String()
}
