package snapshots

import (
	"encoding/json"
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

// TestPlanRollbackLastReadsFilesOnce: undoing the newest record makes its
// restores as the record is read, whether its files are sorted as Save
// writes them or not, keeps none of its files that Contents does not
// need, and refuses a record with a damaged file.
func TestPlanRollbackLastReadsFilesOnce(t *testing.T) {
	for _, sorted := range []bool{true, false} {
		s := NewStore(t.TempDir())
		records := chain()
		for _, r := range records {
			if err := s.Save(r); err != nil {
				t.Fatal(err)
			}
		}
		newest := records[len(records)-1]
		if !sorted {
			// R4 lists codex's a after claude_code's c: swap them.
			r := *newest
			r.Files = []FileChange{newest.Files[1], newest.Files[0]}
			data, _ := json.Marshal(r)
			if err := os.WriteFile(filepath.Join(s.Dir(), "snapshots", r.ID+".json"), data, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		for _, filter := range [][]string{nil, {"codex"}} {
			p, err := s.PlanRollback("", true, filter)
			if err != nil {
				t.Fatal(err)
			}
			want, to, _ := RestoreLast(records, filter)
			if !reflect.DeepEqual(p.Restores, want) || p.To != to || len(p.Records) != 1 || len(p.Records[0].Files) != 0 {
				t.Errorf("sorted %v: PlanRollback(--last, %v) = %+v to %q, %d files kept; want %+v to %q, none kept", sorted, filter, p.Restores, p.To, len(p.Records[0].Files), want, to)
			}
		}
		r := *newest
		r.Files = []FileChange{newest.Files[0], newest.Files[1]}
		r.Files[1].Op = "bogus"
		data, _ := json.Marshal(r)
		if err := os.WriteFile(filepath.Join(s.Dir(), "snapshots", r.ID+".json"), data, 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := s.PlanRollback("", true, nil)
		wantCode(t, err, apperr.SnapshotCorrupted)
	}
}
