package trainers

import (
	"errors"
	"fmt"
)

// PlayerStep takes one optimiser step of one player of an adversarial game
// and reports it (Loss and, for DP-SGD steps, the diagnostics; the loop
// fills in the run, epoch, stage and step number).
type PlayerStep func() (EpochStats, error)

// Phase is one adversarial pair of an epoch: a discriminator and a
// generator (ASGL: the positive pair G+/D+, then the negative G−/D−).
type Phase struct {
	Name string
	// Begin, if set, runs at the start of the phase in every epoch (e.g.
	// drawing the round's walk key, freezing the generator's scores).
	Begin func(epoch int) error
	// Disc and Gen take one step of each player; DiscSteps and GenSteps
	// are how many each phase of each epoch takes (0: the player sits
	// out; its step may then be nil).
	Disc, Gen           PlayerStep
	DiscSteps, GenSteps int
}

// Adversarial is the alternating loop of GAN training (GraphGAN, Wang et
// al. 2018; ASGL's Algorithm 2): for each of Epochs epochs, each phase in
// order runs DiscSteps discriminator steps and then GenSteps generator
// steps. Every step is reported to the recorder as a "step" (stage 2k+1
// for phase k's discriminator, 2k+2 for its generator) and every epoch as
// an "epoch" with the mean discriminator loss of that epoch.
type Adversarial struct {
	Epochs   int
	Phases   []Phase
	Recorder Recorder
	Run      int
	// EndEpoch, if set, runs after every epoch (evaluation for a trace);
	// its error stops the loop.
	EndEpoch func(epoch int) error
}

// Validate checks the loop: positive epochs, at least one phase, no
// negative step count and a step function for every player that steps.
func (a *Adversarial) Validate() error {
	if a.Epochs < 1 {
		return fmt.Errorf("trainers: adversarial loop with %d epochs", a.Epochs)
	}
	if len(a.Phases) == 0 {
		return errors.New("trainers: adversarial loop without phases")
	}
	for _, p := range a.Phases {
		if p.DiscSteps < 0 || p.GenSteps < 0 {
			return fmt.Errorf("trainers: phase %s: %d discriminator and %d generator steps", p.Name, p.DiscSteps, p.GenSteps)
		}
		if (p.DiscSteps > 0 && p.Disc == nil) || (p.GenSteps > 0 && p.Gen == nil) {
			return fmt.Errorf("trainers: phase %s: a player that takes steps has no step function", p.Name)
		}
	}
	return nil
}

// Steps returns the number of steps Train takes with each player, summed
// over the phases and epochs: what a private player's plan must account
// (a method compares it with its recorders' Planned before training).
func (a *Adversarial) Steps() (disc, gen int) {
	for _, p := range a.Phases {
		disc += p.DiscSteps
		gen += p.GenSteps
	}
	return a.Epochs * disc, a.Epochs * gen
}

// Train runs the loop. It returns the number of steps each player took,
// indexed like the stages (2k: phase k's discriminator, 2k+1 its
// generator).
func (a *Adversarial) Train() ([]int, error) {
	if err := a.Validate(); err != nil {
		return nil, err
	}
	rec := a.Recorder
	if rec == nil {
		rec = Nop{}
	}
	taken := make([]int, 2*len(a.Phases))
	for epoch := 1; epoch <= a.Epochs; epoch++ {
		dLoss, dSteps := 0.0, 0
		for k, p := range a.Phases {
			if p.Begin != nil {
				if err := p.Begin(epoch); err != nil {
					return taken, fmt.Errorf("epoch %d, phase %s: %w", epoch, p.Name, err)
				}
			}
			for _, pl := range []struct {
				step  PlayerStep
				steps int
				stage int
				what  string
			}{{p.Disc, p.DiscSteps, 2 * k, "discriminator"}, {p.Gen, p.GenSteps, 2*k + 1, "generator"}} {
				for range pl.steps {
					st, err := pl.step()
					if err != nil {
						return taken, fmt.Errorf("epoch %d, phase %s, %s step: %w", epoch, p.Name, pl.what, err)
					}
					taken[pl.stage]++
					st.Kind, st.Run, st.Epoch, st.Stage, st.Step = "step", a.Run, epoch, pl.stage+1, taken[pl.stage]
					rec.Step(st)
					if pl.stage%2 == 0 {
						dLoss += st.Loss
						dSteps++
					}
				}
			}
		}
		if dSteps > 0 {
			dLoss /= float64(dSteps)
		}
		rec.Epoch(EpochStats{Kind: "epoch", Run: a.Run, Epoch: epoch, Loss: dLoss})
		if a.EndEpoch != nil {
			if err := a.EndEpoch(epoch); err != nil {
				return taken, err
			}
		}
	}
	return taken, nil
}
