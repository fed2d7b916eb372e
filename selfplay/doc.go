// Package selfplay will hold the self-play workers, the training loop that
// alternates self-play and training, the arena that rates versions, the
// baseline players and the clients for outside engines.
package selfplay
