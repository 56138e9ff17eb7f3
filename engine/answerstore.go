package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"path/filepath"

	"github.com/agentpack/agentpack/engine/plan"
	"github.com/agentpack/agentpack/engine/sourcecache"
	"github.com/agentpack/agentpack/internal/fsys"
)

// maxKeptAnswer is the largest answer kept on disk: an answer listing
// thousands of drifted paths is cheaper to compute than to keep and
// decode, and an unchanged tree's answer is a few hundred bytes.
const maxKeptAnswer = 256 << 10

// keptOnDisk is [memoized] for a process that lives for one command: the
// answer of key is read from its file under the cache folder and used when
// every path it was computed from has the same stat data; otherwise fn
// runs through a tracking System and its answer is written for the next
// command. T must survive a JSON round trip unchanged.
func keptOnDisk[T any](ctx context.Context, e *Engine, key string, fn func(ctx context.Context) (*State, T, error)) (*State, T, error) {
	key += "\x00" + e.SourceCache.Build
	path := e.answerPath(key)
	if st, out, ok := keptAnswer[T](e, key, path); ok {
		return st, out, nil
	}
	tracker := fsys.NewTrackingSystem(e.Sys)
	sys := e.Sys
	e.Sys = tracker
	st, out, err := fn(ctx)
	e.Sys = sys
	if err != nil || st == nil {
		return st, out, err
	}
	e.keepAnswer(key, path, tracker, st, out)
	return st, out, nil
}

// keptAnswer is the answer of key kept at path, when it decodes and
// nothing it was computed from changed. The State holds what renderers
// read (repo, project, profile, targets, warnings), no desired state.
func keptAnswer[T any](e *Engine, key string, path fsys.AbsPath) (*State, T, bool) {
	var out T
	data, err := e.Sys.ReadFile(path)
	if err != nil {
		return nil, out, false
	}
	a, err := sourcecache.DecodeAnswer(data)
	if err != nil || a.Key != key || !a.Fingerprint.Unchanged(e.Sys) || json.Unmarshal(a.Data, &out) != nil {
		return nil, out, false
	}
	st := &State{Repo: a.Repo, Project: a.Project, Profile: a.Profile, Targets: a.Targets, Warnings: a.Warnings}
	return st, out, true
}

// keepAnswer writes out's file when every path tracker saw is old enough
// to trust (see [fsys.TrackingSystem.Fingerprint]) and out is small; a
// failure only costs speed next time.
func (e *Engine) keepAnswer(key string, path fsys.AbsPath, tracker *fsys.TrackingSystem, st *State, out any) {
	data, err := json.Marshal(out)
	if err != nil || len(data) > maxKeptAnswer {
		return
	}
	// agentpack's caches are left out: each vouches only for what its
	// own stat data says, and every path behind them (sources, deployed
	// files, listed folders, manifests) is in the fingerprint itself.
	caches, stats := abs(e.Env.CacheDir()), plan.StatCachePath(abs(e.Env.StateDir()))
	fp, ok := tracker.FingerprintWithout(e.Sys, e.SourceCache.racy(), func(p fsys.AbsPath) bool { return caches.Contains(p) || stats.Contains(p) })
	if !ok {
		return
	}
	file := sourcecache.EncodeAnswer(&sourcecache.Answer{Key: key, Fingerprint: fp, Repo: st.Repo, Project: st.Project,
		Profile: st.Profile, Targets: st.Targets, Warnings: st.Warnings, Data: data})
	e.writeCacheFile(path, file)
}

// answerPath is the file of key's kept answer.
func (e *Engine) answerPath(key string) fsys.AbsPath {
	sum := sha256.Sum256([]byte(key))
	return abs(filepath.Join(e.Env.CacheDir(), "answers", hex.EncodeToString(sum[:12])+".bin"))
}
