package history

// Check compares every file the history knows with its last recorded state and
// returns the ones that differ: changed outside mcpdiff, or left half-done by a
// process killed between logging a change and applying it.
func (s *Store) Check() ([]Drift, error) {
	snap, err := s.load()
	if err != nil {
		return nil, err
	}
	all, _ := lineages(snap)
	var drifts []Drift
	for _, l := range all {
		p, err := s.replay(l, snap, currentStatus)
		if err != nil {
			return nil, err
		}
		d, _, err := s.drift(p.R)
		if err != nil {
			return nil, err
		}
		if d != nil {
			drifts = append(drifts, *d)
		}
	}
	return drifts, nil
}
