// Package arena compares players: matches of many games at once with the
// colours alternating and each random opening played from both sides
// (RunArena), the score's Elo difference with its interval and the
// sequential probability ratio test (Score, SPRT), ratings fitted to many
// matches (FitRatings), and a run's match log (AppendMatch, ReadMatches).
package arena
