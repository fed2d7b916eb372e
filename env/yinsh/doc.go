// Package yinsh is the game YINSH and its blitz variant, with the rules,
// notation and decisions of shared/rules/yinsh.md: registered as "yinsh"
// (3 removed rings win) and "yinsh-blitz" (1 ring wins). White (player 0)
// places and moves first; Black is player 1.
//
// # Decisions
//
// Every decision is one action and one ply: placing a ring, moving a
// ring, choosing a row to remove, choosing a ring to remove, and passing
// (the only action of a player whose rings cannot move). After a ring
// move the mover removes their rows, one row and one ring at a time, then
// the opponent removes the rows the move made for them, then the opponent
// moves. The game ends when a player has removed 3 rings (blitz: 1), when
// a player is to move and the supply of 51 markers is empty, or when a
// player passes and the other cannot move either; the last two are won by
// the player who removed more rings, and equal counts are a draw.
//
// # Action space
//
// ActionCount = 2,142 actions, in this order:
//
//	0     … 84     P <point>        place a ring on point 0..84
//	85    … 1932   M <from> <to>    the 1,848 ring moves: every ordered pair
//	                                of distinct points on one line, by from,
//	                                then to
//	1933  … 2055   R <end> <end>    the 123 windows of 5 points on a line,
//	                                by their lower end, then the heading
//	                                (column, row number, diagonal)
//	2056  … 2140   X <point>        remove the ring on point 0..84
//	2141           pass
//
// Points are numbered by column letter, then row number: A2 = 0, A3, A4,
// A5, B1 = 4, …, K10 = 84 (see ParsePoint and PointName). So the order of
// actions is the order of the notation's points, and a row's ends print
// in the sorted order the notation asks for.
//
// # Encoding
//
// Planes (13) planes of 11×11, cell (row − 1)·11 + column with column
// 0..10 for A..K, from the point of view of the player to decide; the list
// of planes is in encode.go. The 36 cells that are not points are 0 on
// every board plane.
//
// # Symmetries
//
// The 12 symmetries of the hexagon about F6: 6 rotations, with and without
// the mirror that swaps the column and row-number directions. Each maps
// points, cells and actions; the cells off the board stay in place.
//
// # Speed
//
// A state is a value of a few words: four 85-bit sets (rings and markers
// per colour) and counters, so copying it is the copy the search needs.
// Ray tables per point and heading are computed once at start-up. Listing
// moves, applying one and encoding allocate nothing; Perft walks copies on
// the stack and counts the last ply without playing it.
//
// # Records
//
// ReadBoardspace reads boardspace.net's SGF records into this notation.
package yinsh
