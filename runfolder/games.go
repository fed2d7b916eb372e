package runfolder

import (
	"errors"
	"fmt"
	"strings"
)

// A generation's self-play games are kept one a line in the format of
// flipzero convert (the moves joined by ';', a tab, the outcome, a tab,
// the game), so the run's page can replay them and other tools can read
// them; they cost a fraction of the shard that holds their positions.

// GameLine is one self-play game as its record line gives it.
type GameLine struct {
	Moves []string
	// Outcome is the winner's name (white, black) or draw, or a
	// one-player game's "score N"; the game may have ended by
	// resignation before the rules end it.
	Outcome string
	Game    string
}

// ReadGames reads at most limit games of a record file, and no more than
// maxBytes of it, under the run folder's policy for record files
// (ReadRecords): the file may come from elsewhere, and a line
// that is not a record (no outcome after a tab) is skipped and counted.
func ReadGames(path string, limit int, maxBytes int64) (games []GameLine, skipped int, err error) {
	games, skipped, err = ReadRecords(path, maxBytes, Start, parseGameLine)
	if err != nil {
		return nil, 0, fmt.Errorf("games: %w", err)
	}
	return games[:min(len(games), limit)], skipped, nil
}

// parseGameLine reads a line as loop.FormatGame writes it: moves separated by
// ";", a tab, the outcome, and (in newer files) a tab and the game.
func parseGameLine(line []byte) (GameLine, error) {
	fields := strings.Split(string(line), "\t")
	if len(fields) < 2 {
		return GameLine{}, errors.New("no outcome after a tab")
	}
	g := GameLine{Outcome: fields[1]}
	if len(fields) > 2 {
		g.Game = fields[2]
	}
	if fields[0] != "" {
		g.Moves = strings.Split(fields[0], ";")
	}
	return g, nil
}
