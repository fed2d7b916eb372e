package nn

import (
	"errors"
	"fmt"
	"math"
)

// TrainConfig sets the optimizer: SGD with momentum and L2 weight decay.
// LearningRate may be changed between steps (Trainer.SetLearningRate) to
// follow a schedule.
type TrainConfig struct {
	// LearningRate is the step size, changed between steps by a schedule
	// (the loop's train.learning_rate), so it has no config key here.
	LearningRate float64 `json:"learning_rate" yaml:"-"`
	// Momentum of SGD (default 0.9, AlphaZero's).
	Momentum float64 `json:"momentum" yaml:"momentum"`
	// WeightDecay is c in the loss term c·Σw² over the convolution and
	// fully connected weights (default 1e-4, AlphaZero's).
	WeightDecay float64 `json:"weight_decay" yaml:"weight_decay"`
	// BatchNormMomentum is how much of each batch's statistics goes into
	// the running statistics used for inference (0 < m ≤ 1; default 0.1, so
	// the statistics follow a network that changes every step).
	BatchNormMomentum float64 `json:"batch_norm_momentum" yaml:"batch_norm_momentum"`
	// OwnershipWeight and ScoreWeight scale the auxiliary heads' losses
	// (mean squared errors, per cell and per sample) in the total, where
	// the network has the heads (default 1.5 and 0.5: KataGo weighs
	// ownership as much as the value, and the margin, which mostly
	// repeats the result, less).
	OwnershipWeight float64 `json:"ownership_weight,omitempty" yaml:"ownership_weight"`
	ScoreWeight     float64 `json:"score_weight,omitempty" yaml:"score_weight"`
	// SoftPolicyWeight scales the soft policy head's cross-entropy in the
	// total, where the network has the head (default 8, KataGo's: the
	// flattened target's gradients are small beside the policy's).
	SoftPolicyWeight float64 `json:"soft_policy_weight,omitempty" yaml:"soft_policy_weight"`
}

// DefaultTrainConfig is AlphaZero's optimizer at a learning rate suited to
// small batches.
func DefaultTrainConfig() TrainConfig {
	return TrainConfig{LearningRate: 0.02, Momentum: 0.9, WeightDecay: 1e-4, BatchNormMomentum: 0.1,
		OwnershipWeight: 1.5, ScoreWeight: 0.5, SoftPolicyWeight: 8}
}

// Validate checks that every setting is in range.
func (c TrainConfig) Validate() error {
	switch {
	case !(c.LearningRate > 0 && c.LearningRate < 100):
		return fmt.Errorf("learning_rate: %g, want in (0, 100)", c.LearningRate)
	case !(c.Momentum >= 0 && c.Momentum < 1):
		return fmt.Errorf("momentum: %g, want in [0, 1)", c.Momentum)
	case !(c.WeightDecay >= 0 && c.WeightDecay < 1):
		return fmt.Errorf("weight_decay: %g, want in [0, 1)", c.WeightDecay)
	case !(c.BatchNormMomentum > 0 && c.BatchNormMomentum <= 1):
		return fmt.Errorf("batch_norm_momentum: %g, want in (0, 1]", c.BatchNormMomentum)
	case !(c.OwnershipWeight >= 0 && c.OwnershipWeight <= 100):
		return fmt.Errorf("ownership_weight: %g, want in [0, 100]", c.OwnershipWeight)
	case !(c.ScoreWeight >= 0 && c.ScoreWeight <= 100):
		return fmt.Errorf("score_weight: %g, want in [0, 100]", c.ScoreWeight)
	case !(c.SoftPolicyWeight >= 0 && c.SoftPolicyWeight <= 100):
		return fmt.Errorf("soft_policy_weight: %g, want in [0, 100]", c.SoftPolicyWeight)
	}
	return nil
}

// Batch is one training batch of B samples as flat slices.
type Batch struct {
	// Inputs are the encoded positions, B × planes × height × width,
	// already augmented by symmetry.
	Inputs []float32
	// Policy is the search's visit distribution, B × actions, zero on
	// illegal actions.
	Policy []float32
	// Legal is 1 for a legal action and 0 otherwise, B × actions.
	Legal []float32
	// Value is the outcome as win/draw/loss probabilities from the view of
	// the player to move, B × 3.
	Value []float32
	// Weights weigh each sample's loss, B values ≥ 0 (nil: all 1).
	Weights []float32
	// Ownership (B × cells, each −1 to 1) and Margin (B, −1 to 1) are
	// the auxiliary targets from the mover's point of view, for the
	// samples Aux marks with 1 (B values, 0 or 1); all three nil where no
	// sample has them. A network without the heads ignores them.
	Ownership, Margin, Aux []float32
}

// WDLTarget is the value head's win/draw/loss target for a game's outcome
// z in [-1, 1] from the mover's view (a training sample's): 1, 0 and -1
// give the one-hot win, draw and loss of a two-player game, and a value
// between them, a one-player game's normalised score, is shared between
// its two neighbours (z = 0.5: half a win, half a draw). Cross-entropy
// against a soft target is least where the head predicts the target's
// mean, so the head's value P(win) − P(loss) learns the expected z — the
// number the search backs up, in the same [-1, 1]. Sharing between win
// and loss alone ((1+z)/2, 0, (1−z)/2) would teach the same value but
// make a two-player draw half a win and half a loss.
func WDLTarget(z float32) (win, draw, loss float32) {
	z = min(max(z, -1), 1)
	if z >= 0 {
		return z, 1 - z, 0
	}
	return 0, 1 + z, -z
}

// Losses are a step's losses, averaged over the batch (by sample weight).
type Losses struct {
	// Policy is the cross-entropy of the policy (over legal actions)
	// against the visit distribution.
	Policy float64
	// Value is the cross-entropy of the win/draw/loss head against the
	// outcome.
	Value float64
	// Ownership and Score are the auxiliary heads' mean squared errors
	// (per cell, per sample) over the samples that have the targets, 0
	// for a network without the heads; Total counts them times their
	// weights.
	Ownership, Score float64
	// SoftPolicy is the soft policy head's cross-entropy against
	// SoftPolicyTarget, 0 for a network without the head; Total counts
	// it times its weight.
	SoftPolicy float64
	// L2 is the weight-decay term.
	L2    float64
	Total float64
}

// SoftPolicyTarget writes into soft the soft policy head's target for
// the policy targets policy (both samples × actions): each sample's
// target raised to the power ¼ (KataGo's), renormalised to sum to
// weight(row), the sample's weight in the loss (1 where weight is nil).
// Actions the target leaves at zero stay at zero; a sample whose target
// is all zero gets an all-zero soft target, as it gets no policy loss.
func SoftPolicyTarget(soft, policy []float32, actions int, weight func(row int) float64) {
	for lo := 0; lo+actions <= len(policy); lo += actions {
		row, out := policy[lo:lo+actions], soft[lo:lo+actions]
		sum := 0.0
		for a, p := range row {
			v := 0.0
			if p > 0 {
				v = math.Sqrt(math.Sqrt(float64(p)))
			}
			out[a] = float32(v)
			sum += v
		}
		if sum == 0 {
			continue
		}
		w := 1.0
		if weight != nil {
			w = weight(lo / actions)
		}
		scale := float32(w / sum)
		for a := range out {
			out[a] *= scale
		}
	}
}

// Weight is sample i's weight: Weights[i], or 1 where the batch has none.
func (b Batch) Weight(i int) float32 {
	if b.Weights == nil {
		return 1
	}
	return b.Weights[i]
}

// Check validates a batch of n samples for a network with the given
// numbers of actions and cells: every backend's trainer rejects what it
// rejects.
func (b Batch) Check(n, actions, cells int) error {
	switch {
	case len(b.Policy) != n*actions:
		return fmt.Errorf("%d policy values, want %d", len(b.Policy), n*actions)
	case len(b.Legal) != n*actions:
		return fmt.Errorf("%d legal-mask values, want %d", len(b.Legal), n*actions)
	case len(b.Value) != n*valueOutputs:
		return fmt.Errorf("%d value targets, want %d (win/draw/loss per sample)", len(b.Value), n*valueOutputs)
	case b.Weights != nil && len(b.Weights) != n:
		return fmt.Errorf("%d sample weights, want %d", len(b.Weights), n)
	case b.Aux != nil && (len(b.Aux) != n || len(b.Margin) != n || len(b.Ownership) != n*cells):
		return fmt.Errorf("auxiliary targets: %d marks, %d margins and %d ownership values, want %d, %d and %d",
			len(b.Aux), len(b.Margin), len(b.Ownership), n, n, n*cells)
	case b.Aux == nil && (b.Margin != nil || b.Ownership != nil):
		return errors.New("auxiliary targets without the marks of the samples that have them")
	}
	for i := 0; i < n; i++ {
		if w := b.Weight(i); !(w >= 0) || math.IsInf(float64(w), 0) {
			return fmt.Errorf("sample %d: weight %g", i, w)
		}
		legal := 0
		for a := i * actions; a < (i+1)*actions; a++ {
			switch m := b.Legal[a]; {
			case m == 1:
				legal++
			case m != 0:
				return fmt.Errorf("sample %d: legal mask %g for action %d, want 0 or 1", i, m, a-i*actions)
			case b.Policy[a] != 0:
				return fmt.Errorf("sample %d: policy target %g on illegal action %d", i, b.Policy[a], a-i*actions)
			}
			if p := b.Policy[a]; !(p >= 0 && p <= 1) {
				return fmt.Errorf("sample %d: policy target %g for action %d", i, p, a-i*actions)
			}
		}
		if legal == 0 {
			return fmt.Errorf("sample %d: no legal action", i)
		}
		for k := i * valueOutputs; k < (i+1)*valueOutputs; k++ {
			if v := b.Value[k]; !(v >= 0 && v <= 1) {
				return fmt.Errorf("sample %d: value target %g", i, v)
			}
		}
		if err := b.checkAux(i, cells); err != nil {
			return err
		}
	}
	return nil
}

// checkAux validates sample i's auxiliary targets, if the batch has any.
func (b Batch) checkAux(i, cells int) error {
	if b.Aux == nil {
		return nil
	}
	switch a := b.Aux[i]; {
	case a == 0:
		return nil
	case a != 1:
		return fmt.Errorf("sample %d: auxiliary mark %g, want 0 or 1", i, a)
	case !(b.Margin[i] >= -1 && b.Margin[i] <= 1):
		return fmt.Errorf("sample %d: score margin %g, want in [-1, 1]", i, b.Margin[i])
	}
	for c := i * cells; c < (i+1)*cells; c++ {
		if o := b.Ownership[c]; !(o >= -1 && o <= 1) {
			return fmt.Errorf("sample %d: ownership %g of cell %d, want in [-1, 1]", i, o, c-i*cells)
		}
	}
	return nil
}

// graph returns the training graph for batch size n, building it on first
