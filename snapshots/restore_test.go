package snapshots

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/agentpack/agentpack/internal/apperr"
)

// change builds a FileChange for path p of target tg from before to after
// ("" = absent), using the content helper for non-empty states.
func change(tg, p, before, after string) FileChange {
	f := FileChange{Target: tg, Root: "/" + tg, Path: "/" + tg + "/" + p}
	if before != "" {
		f.Before = content(before)
	}
	if after != "" {
		f.After = content(after)
	}
	switch {
	case before == "":
		f.Op = OpCreate
	case after == "":
		f.Op = OpDelete
	default:
		f.Op = OpUpdate
	}
	return f
}

// want builds the expected Restore of path p: state "" = must not exist.
func want(tg, p, state, blobID string) Restore {
	r := Restore{Target: tg, Root: "/" + tg, Path: "/" + tg + "/" + p}
	if state != "" {
		r.Content = content(state)
		r.BlobID = blobID
	}
	return r
}

// chain is: R1 creates a, b (codex) and c (claude_code); R2 updates a,
// deletes b, creates d; R3 rolls back to R1; R4 updates a and c.
func chain() []*Record {
	r1 := "R1"
	return []*Record{
		{ID: "R1", Kind: KindDeploy, Files: []FileChange{
			change("codex", "a", "", "1"), change("codex", "b", "", "2"), change("claude_code", "c", "", "3"),
		}},
		{ID: "R2", Kind: KindDeploy, Files: []FileChange{
			change("codex", "a", "1", "4"), change("codex", "b", "2", ""), change("codex", "d", "", "5"),
		}},
		{ID: "R3", Kind: KindRollback, RolledBackTo: &r1, Files: []FileChange{
			change("codex", "a", "4", "1"), change("codex", "b", "", "2"), change("codex", "d", "5", ""),
		}},
		{ID: "R4", Kind: KindDeploy, Files: []FileChange{
			change("claude_code", "c", "3", "6"), change("codex", "a", "1", "7"),
		}},
	}
}

func TestRestoreTo(t *testing.T) {
	tests := []struct {
		name    string
		to      string
		targets []string
		want    []Restore
	}{
		{"undo newest", "R3", nil, []Restore{
			want("claude_code", "c", "3", "R1"), want("codex", "a", "1", "R3"),
		}},
		{"undo a rollback too", "R2", nil, []Restore{
			want("claude_code", "c", "3", "R1"), want("codex", "a", "4", "R2"),
			want("codex", "b", "", ""), want("codex", "d", "5", "R2"),
		}},
		{"newest After up to toID wins", "R1", nil, []Restore{
			want("claude_code", "c", "3", "R1"), want("codex", "a", "1", "R1"),
			want("codex", "b", "2", "R1"), want("codex", "d", "", ""),
		}},
		{"before everything", "", nil, []Restore{
			want("claude_code", "c", "", ""), want("codex", "a", "", ""),
			want("codex", "b", "", ""), want("codex", "d", "", ""),
		}},
		{"target filter", "R1", []string{"codex"}, []Restore{
			want("codex", "a", "1", "R1"), want("codex", "b", "2", "R1"), want("codex", "d", "", ""),
		}},
		{"other target filter", "", []string{"claude_code"}, []Restore{want("claude_code", "c", "", "")}},
		{"all means every target", "R3", []string{"all"}, []Restore{
			want("claude_code", "c", "3", "R1"), want("codex", "a", "1", "R3"),
		}},
		{"target with no changes", "R1", []string{"cursor"}, []Restore{}},
		{"to the newest is a no-op", "R4", nil, []Restore{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			records := chain()
			got, err := RestoreTo(records, tt.to, tt.targets)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("RestoreTo(%q, %v) =\n%v\nwant\n%v", tt.to, tt.targets, got, tt.want)
			}
			// Input order does not matter.
			slices.Reverse(records)
			again, err := RestoreTo(records, tt.to, tt.targets)
			if err != nil || !reflect.DeepEqual(again, got) {
				t.Fatalf("RestoreTo depends on input order: %v, %v", again, err)
			}
			if records[0].ID != "R4" {
				t.Fatal("RestoreTo reordered the caller's slice")
			}
		})
	}
	_, err := RestoreTo(chain(), "R9", nil)
	wantCode(t, err, apperr.SnapshotNotFound)
}

func TestRestoreLast(t *testing.T) {
	got, to, err := RestoreLast(chain(), nil)
	if err != nil || to != "R3" {
		t.Fatalf("RestoreLast = %s, %v", to, err)
	}
	if want := []Restore{want("claude_code", "c", "3", "R4"), want("codex", "a", "1", "R4")}; !reflect.DeepEqual(got, want) {
		t.Fatalf("RestoreLast = %v, want %v", got, want)
	}

	// Undoing a rollback record restores what it replaced.
	got, to, err = RestoreLast(chain()[:3], []string{"codex"})
	if err != nil || to != "R2" {
		t.Fatalf("RestoreLast over a rollback = %s, %v", to, err)
	}
	if want := []Restore{want("codex", "a", "4", "R3"), want("codex", "b", "", ""), want("codex", "d", "5", "R3")}; !reflect.DeepEqual(got, want) {
		t.Fatalf("RestoreLast over a rollback = %v, want %v", got, want)
	}

	got, to, err = RestoreLast(chain()[:1], nil)
	if err != nil || to != "" || len(got) != 3 || got[0].Content != nil {
		t.Fatalf("RestoreLast of the only record = %v, %q, %v", got, to, err)
	}
	_, _, err = RestoreLast(nil, nil)
	wantCode(t, err, apperr.SnapshotNotFound)
}

// TestRestoreToSimulated drives a model disk through random deploys and
// (partly target-filtered) rollbacks recorded the way the engine records
// them, and checks that every RestoreTo brings the disk back exactly.
func TestRestoreToSimulated(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	targets := []string{"codex", "cursor"}
	paths := []string{"a", "b", "c", "d"}
	type disk map[fileKey]string // absent key = no file
	apply := func(d disk, id string, restores []Restore) []FileChange {
		var files []FileChange
		for _, r := range restores {
			k := fileKey{r.Target, r.Path}
			after := ""
			if r.Content != nil {
				after = r.Content.SHA256[:1]
			}
			if before := d[k]; before != after {
				files = append(files, change(r.Target, r.Path[len(r.Target)+2:], before, after))
				if after == "" {
					delete(d, k)
				} else {
					d[k] = after
				}
			}
		}
		return files
	}
	for round := 0; round < 50; round++ {
		cur := disk{}
		var records []*Record
		var after []disk // after[i]: the disk right after records[i]
		for i := 0; i < 12; i++ {
			id := fmt.Sprintf("R%02d", i)
			var files []FileChange
			if i > 0 && rng.IntN(3) == 0 {
				to := ""
				if j := rng.IntN(i + 1); j < i {
					to = records[j].ID
				}
				var filter []string
				if rng.IntN(2) == 0 {
					filter = []string{targets[rng.IntN(2)]}
				}
				rs, err := RestoreTo(records, to, filter)
				if err != nil {
					t.Fatal(err)
				}
				files = apply(cur, id, rs)
			} else {
				var desired []Restore
				for _, tg := range targets {
					for _, p := range paths {
						if rng.IntN(2) == 0 {
							continue // untouched by this deploy
						}
						r := Restore{Target: tg, Path: "/" + tg + "/" + p}
						if v := rng.IntN(4); v > 0 {
							r.Content = content(fmt.Sprint(v))
						}
						desired = append(desired, r)
					}
				}
				files = apply(cur, id, desired)
			}
			rec := &Record{ID: id, Kind: KindDeploy, Files: files}
			if err := rec.Validate(); err != nil {
				t.Fatalf("simulated record invalid: %v", err)
			}
			records = append(records, rec)
			after = append(after, cloneDisk(cur))
		}
		for j := -1; j < len(records); j++ {
			for _, filter := range [][]string{nil, {"codex"}} {
				to, wantDisk := "", disk{}
				if j >= 0 {
					to, wantDisk = records[j].ID, after[j]
				}
				d := cloneDisk(cur)
				rs, err := RestoreTo(records, to, filter)
				if err != nil {
					t.Fatal(err)
				}
				apply(d, "", rs)
				for _, tg := range targets {
					for _, p := range paths {
						k := fileKey{tg, "/" + tg + "/" + p}
						exp := wantDisk[k]
						if filter != nil && !slices.Contains(filter, tg) {
							exp = cur[k]
						}
						if d[k] != exp {
							t.Fatalf("round %d, RestoreTo(%q, %v): %v is %q, want %q", round, to, filter, k, d[k], exp)
						}
					}
				}
			}
		}
	}
}

func cloneDisk[M ~map[K]V, K comparable, V any](m M) M {
	out := make(M, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// TestRestoreToIgnoresHandEdits: a hand edit overwritten with --force is not
// "the state right after" the earlier snapshot; its After is.
func TestRestoreToIgnoresHandEdits(t *testing.T) {
	records := []*Record{
		{ID: "R1", Kind: KindDeploy, Files: []FileChange{change("codex", "a", "", "1")}},
		{ID: "R2", Kind: KindDeploy, Files: []FileChange{change("codex", "a", "edited", "2")}},
	}
	got, err := RestoreTo(records, "R1", nil)
	if err != nil {
		t.Fatal(err)
	}
	if w := []Restore{want("codex", "a", "1", "R1")}; !reflect.DeepEqual(got, w) {
		t.Fatalf("RestoreTo = %v, want %v", got, w)
	}
	// Undoing R2 alone brings the hand edit back.
	last, _, err := RestoreLast(records, nil)
	if err != nil {
		t.Fatal(err)
	}
	if w := []Restore{want("codex", "a", "edited", "R2")}; !reflect.DeepEqual(last, w) {
		t.Fatalf("RestoreLast = %v, want %v", last, w)
	}
}
