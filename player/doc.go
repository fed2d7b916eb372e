// Package player has the players of arena games: a Player makes a Seat
// that plays several games at once, so that searching players batch their
// network evaluations across games. Built in: random, greedy (a one-ply
// heuristic), perfect (tic-tac-toe), alphabeta:D, mcts:N (rollouts), a
// network searched by PUCT, and any outside engine over GTP; ParsePlayer
// reads them by the names the command line uses.
package player
