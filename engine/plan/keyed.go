package plan

import (
	"errors"
	"slices"
	"sort"

	"github.com/agentpack/agentpack/engine/target"
	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/cfgedit"
	"github.com/agentpack/agentpack/internal/checksum"
	"github.com/agentpack/agentpack/internal/fsys"
	"github.com/agentpack/agentpack/internal/textdiff"
)

// Key-level ownership (shared config files such as ~/.claude.json).
//
// For these files the unit of ownership is one entry (an MCP server), not
// the file. Plan reads the file's current text, edits only the entries that
// must change ([cfgedit]) and puts the whole new text in the [Change]'s
// After: apply then writes the file whole and atomically like any other,
// the snapshot keeps the whole previous file, and rollback restores it byte
// for byte with no key-level code of its own. The Change's Entries say what
// happens to each entry, with the same update kinds as files (SPEC §4):
// adding an entry is a plain managed change, replacing an entry agentpack
// does not own is adopt_update, replacing or removing an owned entry edited
// by hand is drifted_update.

// Entry-level reasons.
const (
	ReasonEntryMissing   = "entry missing"
	ReasonEntryUnmanaged = "would overwrite unmanaged existing entry"
)

// EntryChange is what a key-level change does to one entry.
type EntryChange struct {
	Name         string   `json:"name"`
	Op           string   `json:"op"`
	UpdateKind   string   `json:"update_kind,omitempty"`
	Reason       string   `json:"reason"`
	BeforeSHA256 *string  `json:"before_sha256"`
	AfterSHA256  *string  `json:"after_sha256"`
	ModuleIDs    []string `json:"module_ids"`
	// Unified is the entry-level diff (its canonical JSON, indented), which
	// stays small however large the file is.
	Unified string `json:"unified,omitempty"`
}

// ManagedEntry is one entry a target manifest says agentpack owns in a
// key-level file, with the sha256 of its canonical JSON.
type ManagedEntry struct {
	Name      string   `json:"name"`
	SHA256    string   `json:"sha256"`
	ModuleIDs []string `json:"module_ids,omitempty"`
}

// keyedSpec is what plan needs to edit a key-level file: its syntax and
// container, from the desired file or, once no module wants it, from the
// manifest.
type keyedSpec struct {
	format    cfgedit.Format
	container []string
	want      *target.KeyedFile // nil: no entry is desired any more
}

func (f ManagedFile) keyed() bool { return f.KeyLevel != nil && f.KeyLevel.Format != "" }

// key is what f says of a key-level file; zero for a whole file.
func (f ManagedFile) key() KeyLevel {
	if f.KeyLevel == nil {
		return KeyLevel{}
	}
	return *f.KeyLevel
}

// WasCreated reports whether f is a key-level file agentpack created.
func (f ManagedFile) WasCreated() bool { return f.KeyLevel != nil && f.KeyLevel.Created }

// ownedHashes maps the entries f owns to their recorded hashes.
func (f ManagedFile) ownedHashes() map[string]string {
	out := map[string]string{}
	for _, e := range f.key().Entries {
		out[e.Name] = e.SHA256
	}
	return out
}

// configInvalid is a shared config file that does not parse: refused,
// never touched.
func configInvalid(path fsys.AbsPath, err error) error {
	var se *cfgedit.SyntaxError
	line := 0
	if errors.As(err, &se) {
		line = se.Line
	}
	msg := "%s does not parse (%v); agentpack edits it entry by entry and will not touch it until it does"
	return apperr.New(apperr.ConfigInvalid, msg, path, err).
		WithHint("fix the file by hand (or move it away), then run the command again").
		With("path", path.String()).With("path_posix", path.ToSlash()).With("line", line).
		With("reason_code", "config_file_invalid")
}

// keyedChange computes the change of a key-level file at path whose
// current state is a: the entries spec wants, against the entries last (its
// manifest record, nil when agentpack owns nothing there) says agentpack
// owns. It returns nil when no entry changes, and the digest of the owned
// entries as they are now (what status compares with the manifest).
func keyedChange(c Change, spec keyedSpec, last *ManagedFile, a Actual) (*Change, string, error) {
	owned := map[string]string{}
	created := false
	if last != nil && last.keyed() {
		owned, created = last.ownedHashes(), last.KeyLevel.Created
	}
	text := a.Data
	// JSON files are parsed once for every entry: ~/.claude.json can be
	// large, and plan and status read it on every run.
	var all map[string][]byte
	if spec.format == cfgedit.JSON {
		var err error
		if all, err = cfgedit.JSONEntries(text, spec.container); err != nil {
			return nil, "", configInvalid(c.Path, err)
		}
	}
	current := func(name string) ([]byte, error) {
		if all != nil {
			return all[name], nil
		}
		b, err := cfgedit.Get(spec.format, text, spec.container, name)
		if err != nil {
			return nil, configInvalid(c.Path, err)
		}
		return b, nil
	}
	// What the owned entries are now, for status.
	now := map[string]string{}
	for name := range owned {
		b, err := current(name)
		if err != nil {
			return nil, "", err
		}
		if b != nil {
			now[name] = checksum.SHA256Hex(b)
		} else {
			now[name] = ""
		}
	}
	digest := target.EntriesSHA256(now)

	next := text
	var entries []EntryChange
	var desiredNames []string
	if spec.want != nil {
		for _, e := range spec.want.Entries {
			desiredNames = append(desiredNames, e.Name)
			cur, err := current(e.Name)
			if err != nil {
				return nil, "", err
			}
			want := e.Canonical()
			if string(cur) == string(want) {
				continue
			}
			after := checksum.SHA256Hex(want)
			ec := EntryChange{Name: e.Name, Op: OpCreate, Reason: ReasonEntryMissing, AfterSHA256: &after, ModuleIDs: e.ModuleIDs}
			if cur != nil {
				before := checksum.SHA256Hex(cur)
				ec.Op, ec.BeforeSHA256, ec.Reason = OpUpdate, &before, ReasonDiffers
				switch h, mine := owned[e.Name]; {
				case !mine:
					ec.UpdateKind, ec.Reason = UpdateAdopt, ReasonEntryUnmanaged
				case h == before:
					ec.UpdateKind = UpdateManaged
				default:
					ec.UpdateKind = UpdateDrifted
				}
			}
			ec.Unified = entryDiff(c.Path, e.Name, cur, want)
			if next, err = cfgedit.Set(spec.format, next, spec.container, e.Name, e.Value); err != nil {
				return nil, "", configInvalid(c.Path, err)
			}
			entries = append(entries, ec)
		}
	}
	// Owned entries no longer desired go; nothing else is ever removed.
	var gone []string
	for name := range owned {
		if !slices.Contains(desiredNames, name) {
			gone = append(gone, name)
		}
	}
	sort.Strings(gone)
	for _, name := range gone {
		cur, err := current(name)
		if err != nil {
			return nil, "", err
		}
		if cur == nil {
			continue // already gone
		}
		before := checksum.SHA256Hex(cur)
		ec := EntryChange{Name: name, Op: OpDelete, Reason: ReasonNoLonger, BeforeSHA256: &before, ModuleIDs: lastIDs(last, name)}
		if before != owned[name] {
			ec.Reason = ReasonEdited
		}
		ec.Unified = entryDiff(c.Path, name, cur, nil)
		if next, err = cfgedit.Remove(spec.format, next, spec.container, name); err != nil {
			return nil, "", configInvalid(c.Path, err)
		}
		entries = append(entries, ec)
	}
	if len(entries) == 0 {
		return nil, digest, nil
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name < entries[j].Name })
	c.Entries = entries
	after := checksum.SHA256Hex(next)
	c.SetBytes(nil, next)
	c.AfterSHA256 = &after
	switch {
	case !a.Exists:
		c.Op, c.Reason = OpCreate, ReasonMissing
	case spec.want == nil && created && cfgedit.Empty(spec.format, next, spec.container):
		// agentpack created the file and nothing else is left in it.
		c.replaces(OpDelete, a.SHA256, a.Mode)
		c.Reason, c.AfterSHA256 = ReasonNoLonger, nil
		c.SetBytes(a.Data, nil)
		if slices.ContainsFunc(entries, func(e EntryChange) bool { return e.Reason == ReasonEdited }) {
			c.Reason = ReasonEdited
		}
	default:
		c.replaces(OpUpdate, a.SHA256, a.Mode)
		c.Reason = ReasonDiffers
		c.SetBytes(a.Data, next)
		c.Mode = a.Mode // a shared file keeps its mode (~/.claude.json is 0600)
		c.UpdateKind = UpdateManaged
		for _, e := range entries {
			switch {
			case e.UpdateKind == UpdateDrifted || e.Reason == ReasonEdited:
				c.UpdateKind = UpdateDrifted
			case e.UpdateKind == UpdateAdopt && c.UpdateKind != UpdateDrifted:
				c.UpdateKind = UpdateAdopt
			}
		}
	}
	return &c, digest, nil
}

func lastIDs(last *ManagedFile, name string) []string {
	if last != nil {
		for _, e := range last.key().Entries {
			if e.Name == name && e.ModuleIDs != nil {
				return e.ModuleIDs
			}
		}
	}
	return []string{}
}

// entryDiff is the unified diff of one entry's canonical JSON, labelled
// path#name.
func entryDiff(path fsys.AbsPath, name string, before, after []byte) string {
	from, to := path.ToSlash()+"#"+name, path.ToSlash()+"#"+name
	if before == nil {
		from = "/dev/null"
	}
	if after == nil {
		to = "/dev/null"
	}
	u, _ := textdiff.Unified(from, to, cfgedit.Pretty(before), cfgedit.Pretty(after))
	return u
}

// KeyedRecord is the manifest record of a key-level desired file after p is
// applied: the entries it owns with their hashes, and whether agentpack
// created the file (then it may delete it once nothing else is left).
func (p *Plan) KeyedRecord(rel string, path fsys.AbsPath, sha string, ids []string, k *target.KeyedFile) ManagedFile {
	kl := &KeyLevel{Format: string(k.Format), Container: slices.Clone(k.Container)}
	mf := ManagedFile{Path: rel, SHA256: sha, ModuleIDs: ids, KeyLevel: kl}
	hashes := k.Hashes()
	for _, e := range k.Entries {
		kl.Entries = append(kl.Entries, ManagedEntry{Name: e.Name, SHA256: hashes[e.Name], ModuleIDs: e.ModuleIDs})
	}
	if last, ok := p.Managed[path]; ok && last.key().Created {
		kl.Created = true
	}
	for _, c := range p.Changes {
		if c.Path == path && c.Op == OpCreate {
			kl.Created = true
		}
	}
	return mf
}

// EntryEdit plans one explicit entry edit outside any desired state (`mcp
// install` and `mcp uninstall`): it sets f's entries in the file at f.Path
// (root is the folder holding it), or with remove removes the entries of
// those names. Nothing is recorded as owned: the entry is the user's, put
// there by a command they ran, so replacing a different entry of the same
// name is what they asked for and needs no --adopt. It returns nil when
// the file already says what was asked.
func EntryEdit(sys fsys.System, targetName string, root fsys.AbsPath, f target.DesiredFile, remove bool) (*Change, error) {
	a, err := ReadActual(sys, NewLinkGuard(sys), nil, root, f.Path, "")
	if err != nil {
		return nil, err
	}
	k := f.Keyed
	spec := keyedSpec{format: k.Format, container: k.Container, want: k}
	var last *ManagedFile
	if remove {
		// Removing is modelled as owning the entry as it is now and
		// desiring nothing.
		spec.want = nil
		last = &ManagedFile{KeyLevel: &KeyLevel{Format: string(k.Format), Container: k.Container}}
		for _, e := range k.Entries {
			cur, err := cfgedit.Get(k.Format, a.Data, k.Container, e.Name)
			if err != nil {
				return nil, configInvalid(f.Path, err)
			}
			if cur != nil {
				last.KeyLevel.Entries = append(last.KeyLevel.Entries, ManagedEntry{Name: e.Name, SHA256: checksum.SHA256Hex(cur), ModuleIDs: []string{}})
			}
		}
	}
	c := Change{Target: targetName, Path: f.Path, PathPosix: f.Path.ToSlash(), ModuleIDs: []string{}, Root: root, Mode: f.Mode}
	kc, _, err := keyedChange(c, spec, last, a)
	if err != nil || kc == nil {
		return nil, err
	}
	for i := range kc.Entries {
		if kc.Entries[i].UpdateKind == UpdateAdopt {
			kc.Entries[i].UpdateKind, kc.Entries[i].Reason = UpdateManaged, ReasonDiffers
		}
	}
	if kc.UpdateKind == UpdateAdopt {
		kc.UpdateKind = UpdateManaged
	}
	return kc, nil
}
