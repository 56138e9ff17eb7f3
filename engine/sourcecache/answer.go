package sourcecache

import (
	"io"

	"github.com/agentpack/agentpack/internal/fsys"
)

// answerMagic starts every answer file; the byte after it is the format
// version.
const (
	answerMagic   = "agentpack answer cache\n"
	answerVersion = 1
)

// Answer is one kept answer of a read-only command (status): what it was
// asked (Key), the stat data of everything it read, sources and targets
// (Fingerprint), and what it answered — the data as JSON and the state a
// renderer needs.
type Answer struct {
	Key string
	// Fingerprint is what [EncodeAnswer] writes; [DecodeAnswer] leaves it
	// nil and sets Stamp, the same entries still encoded.
	Fingerprint *fsys.Fingerprint
	Stamp       Stamp
	Repo        string
	Project     fsys.AbsPath
	Profile     string
	Targets     []string
	Warnings    []string
	Data        []byte
}

// EncodeAnswer writes a's file to out, with a CRC-32C like an [Entry]'s.
func EncodeAnswer(out io.Writer, a *Answer) error {
	w := newWriter(out, answerMagic, answerVersion)
	w.String(a.Key)
	w.fingerprint(a.Fingerprint.Entries())
	w.String(a.Repo)
	w.String(string(a.Project))
	w.String(a.Profile)
	w.Strings(a.Targets)
	w.Strings(a.Warnings)
	w.Bytes(a.Data)
	return w.Close()
}

// DecodeAnswer takes an answer file apart; anything but a complete file of
// this version is an error. data is handed over, as to [Decode].
func DecodeAnswer(data []byte) (*Answer, error) {
	r, key, fp, err := openKeyed(data, answerMagic, answerVersion)
	if err != nil {
		return nil, err
	}
	a := &Answer{Key: key, Stamp: fp}
	a.Repo, a.Project, a.Profile = r.String(), fsys.AbsPath(r.String()), r.String()
	a.Targets, a.Warnings, a.Data = r.Strings(), r.Strings(), r.Bytes()
	if r.Err != nil || len(r.B) != 0 {
		return nil, errDamaged
	}
	return a, nil
}
