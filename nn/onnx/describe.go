package onnx

// Description says, in words for someone using the model outside
// flipzero, how a game's positions are encoded as the model's input and
// what each policy index means. The games' own packages (env/othello,
// env/yinsh, env/tictactoe) define both; the texts follow their Encode
// methods and action-space comments, and the test checks every registered
// game has one.
type Description struct {
	Encoding string // input planes, in order, and how a cell maps to (row, column)
	Actions  string // policy index → move in flipzero's notation
}

// Describe returns the description of the registered game name, and
// whether there is one.
func Describe(game string) (Description, bool) {
	const mover = "All planes are from the point of view of the player to move; values are 0 or 1 unless said otherwise."
	switch game {
	case "tictactoe":
		return Description{
			Encoding: "3 planes of 3×3; [row][column] is square <column letter a..c><row number 1..3>, row index = number - 1. " +
				"Plane 0: the mover's marks; 1: the opponent's marks; 2: all ones. " + mover,
			Actions: "9 actions: index 3*row + column = the square, a1 = 0, b1 = 1, c1 = 2, a2 = 3, …, c3 = 8.",
		}, true
	case "reversi", "othello", "reversi-single":
		d := Description{
			Encoding: "4 planes of 8×8; [row][column] is square <column letter a..h><row number 1..8>, row index = number - 1 " +
				"(a1 is the top-left corner, rows counted from the top). " +
				"Plane 0: the mover's discs; 1: the opponent's discs; 2: the squares where the mover may play; 3: all ones. " + mover,
			Actions: "65 actions: index 8*row + column = the square (a1 = 0, b1 = 1, …, h8 = 63); 64 = pass.",
		}
		if game != "othello" {
			// A tie goes to White, so the network is told who moves.
			d.Encoding = "5 planes of 8×8; [row][column] is square <column letter a..h><row number 1..8>, row index = number - 1 " +
				"(a1 is the top-left corner, rows counted from the top). " +
				"Plane 0: the mover's discs; 1: the opponent's discs; 2: the squares where the mover may play; 3: all ones; " +
				"4: all ones when White (the second player) is to move, zeros when Black is. " + mover
		}
		if game == "reversi-single" {
			d.Actions = "513 actions: index 8*square + direction, square = 8*row + column (a1 = 0, …, h8 = 63) and direction " +
				"0..7 = n ne e se s sw w nw (n towards row 1), written \"f5:n\"; 512 = pass."
		}
		return d, true
	case "reversi-solitaire", "reversi-solitaire-sum":
		d := Description{
			Encoding: "11 planes of 8×8; [row][column] is square <column letter a..h><row number 1..8>, row index = number - 1 " +
				"(a1 top left). Plane 0: gold discs; 1: black discs; 2: face-down tokens; 3: face-up tokens showing gold; " +
				"4: face-up tokens showing black; 5: a face-up token's number / the largest number (sum scoring only); " +
				"6: face-up blank tokens (sum scoring only); 7: tokens turning up now (at a chance node); " +
				"8: the share of the face-down tokens that show gold; 9: the score so far / the best score; " +
				"10: the share of the blanks still face down (planes 8..10 constant over the board). One player: no point of view.",
			Actions: "130 actions: index 2*square + colour (square = 8*row + column, a1 = 0; colour 0 gold, 1 black), " +
				"written \"f5:gold\"; 128, 129: the reveal of a gold or a black face at a chance node (\"reveal:gold\").",
		}
		if game == "reversi-solitaire-sum" {
			d.Actions = "150 actions: index 2*square + colour (square = 8*row + column, a1 = 0; colour 0 gold, 1 black), " +
				"written \"f5:gold\"; 128 and up: the reveal of each distinct face of the token set at a chance node " +
				"(\"reveal:gold-7\", \"reveal:black-blank\"), in the order of env/solitaire/RULES.md."
		}
		return d, true
	case "yinsh", "yinsh-blitz":
		return Description{
			Encoding: "13 planes of 11×11; [row][column] is point <column letter A..K><row number 1..11>, row index = number - 1; " +
				"the 36 cells that are not points of the board are 0 on planes 0 to 4. " +
				"Plane 0: the mover's rings; 1: the opponent's rings; 2: the mover's markers; 3: the opponent's markers; " +
				"4: the 85 points of the board; 5..8: all ones when the decision is to place a ring, to move a ring (or pass), " +
				"to remove a row, to remove a ring; 9: all ones when the mover made the ring move being cleared up (the opponent moves next); " +
				"10: the mover's removed rings / 3; 11: the opponent's removed rings / 3; 12: markers left in the supply / 51 " +
				"(planes 10..12 constant over the board). " + mover,
			Actions: "2142 actions; points numbered by column letter, then row number: A2 = 0, A3, A4, A5, B1 = 4, …, K10 = 84. " +
				"0..84: place a ring on the point (P <point>); " +
				"85..1932: move a ring (M <from> <to>), every ordered pair of distinct points on one line, by from, then to; " +
				"1933..2055: remove a row (R <end> <end>), the 123 windows of 5 points on a line by lower end, then heading (column, row number, diagonal); " +
				"2056..2140: remove the ring on the point (X <point>); 2141: pass.",
		}, true
	}
	return Description{}, false
}
