package plan

// Counts summarises a plan by effect.
type Counts struct {
	Create, Change, Reload, Metadata, Remove, Start, Stop, Unchanged, Drift int
}

// Count tallies the unit changes.
func (p *Plan) Count() Counts {
	var c Counts
	for _, u := range p.Units {
		switch u.Effect {
		case EffectCreate:
			c.Create++
		case EffectRestart, EffectRecreate, EffectRebuild, EffectPull, EffectRun, EffectUpdate, EffectReplace:
			c.Change++
		case EffectReload:
			c.Reload++
		case EffectMetadata:
			c.Metadata++
		case EffectRemove:
			c.Remove++
		case EffectStart:
			c.Start++
		case EffectStop:
			c.Stop++
		case EffectNone, EffectKeep, EffectIgnore:
			c.Unchanged++
		case EffectDrift:
			c.Drift++
		}
	}
	return c
}
