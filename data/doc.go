// Package data will hold training samples: shard files on disk (atomic,
// checksummed), the replay window over the newest samples, and symmetry
// augmentation.
package data
