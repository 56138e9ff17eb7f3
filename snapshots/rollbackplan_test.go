package snapshots

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/agentpack/agentpack/internal/apperr"
)

// TestPlanRollbackMatchesRestoreTo: reading records from the newest back
// and stopping once every path is decided gives the restores of
// RestoreTo over all records, for every snapshot and target filter.
func TestPlanRollbackMatchesRestoreTo(t *testing.T) {
	s := NewStore(t.TempDir())
	records := chain()
	for _, r := range records {
		if err := s.Save(r); err != nil {
			t.Fatal(err)
		}
	}
	for _, to := range []string{"R1", "R2", "R3", "R4"} {
		for _, filter := range [][]string{nil, {"codex"}, {"claude_code"}} {
			p, err := s.PlanRollback(to, false, filter)
			if err != nil {
				t.Fatal(err)
			}
			want, _ := RestoreTo(records, to, filter)
			if !reflect.DeepEqual(p.Restores, want) || p.To != to {
				t.Errorf("PlanRollback(%s, %v) = %+v\nwant %+v", to, filter, p.Restores, want)
			}
		}
	}
	p, err := s.PlanRollback("", true, nil)
	if err != nil {
		t.Fatal(err)
	}
	want, to, _ := RestoreLast(records, nil)
	if !reflect.DeepEqual(p.Restores, want) || p.To != to || len(p.Records) != 1 {
		t.Errorf("PlanRollback(--last) = %+v to %q reading %d records; want %+v to %q reading one", p.Restores, p.To, len(p.Records), want, to)
	}
}

// TestPlanRollbackReadsOnlyWhatItNeeds: a damaged record that no path of
// the rollback depends on does not stop it; one it must read does
// (E_SNAPSHOT_CORRUPTED), since skipping it could undo the wrong changes.
func TestPlanRollbackReadsOnlyWhatItNeeds(t *testing.T) {
	s := NewStore(t.TempDir())
	for _, r := range chain() {
		if err := s.Save(r); err != nil {
			t.Fatal(err)
		}
	}
	// R2 touched a, b and d; R4 (newest) touched a and c.
	if err := os.WriteFile(filepath.Join(s.Dir(), "snapshots", "R2.json"), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PlanRollback("", true, nil); err != nil {
		t.Errorf("rollback --last with an older record damaged: %v", err)
	}
	if p, err := s.PlanRollback("R3", false, []string{"codex"}); err != nil || len(p.Records) != 2 {
		t.Errorf("rollback --to R3 of codex (R4 wrote a, R3 last before it) = %+v, %v; want R3 and R4 read", p, err)
	}
	_, err := s.PlanRollback("R1", false, nil)
	wantCode(t, err, apperr.SnapshotCorrupted)
}
