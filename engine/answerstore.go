package engine

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"slices"

	"github.com/agentpack/agentpack/engine/plan"
	"github.com/agentpack/agentpack/engine/sourcecache"
	"github.com/agentpack/agentpack/internal/fsys"
	"github.com/agentpack/agentpack/internal/gcpace"
)

// maxKeptAnswer is the largest answer kept on disk: an answer listing
// thousands of drifted paths is cheaper to compute than to keep and
// decode, and an unchanged tree's answer is a few hundred bytes.
const maxKeptAnswer = 256 << 10

// Kept answers: a CLI process lives for one command, so status, an empty
// plan or diff, and a deploy with nothing to do keep their answer in a file
// under the cache folder with the stat data of every path it was computed
// from; the next command stats those paths (one stat each, in parallel)
// instead of decoding the caches and computing the plan again.

// computeAndKeep runs fn through a tracking System and keeps its answer
// when keep (nil: always) agrees, with the answers fn found along the way
// ([Engine.keepInSyncAlongside]).
func computeAndKeep[T any](ctx context.Context, e *Engine, key string, path fsys.AbsPath, fn func(ctx context.Context) (*State, T, error), keep func(T) bool) (*State, T, error) {
	tracker := fsys.NewTrackingSystem(e.Sys)
	sys := e.Sys
	e.Sys, e.alongside, e.keeping = tracker, nil, tracker
	st, out, err := fn(ctx)
	along := e.alongside
	e.Sys, e.alongside, e.keeping = sys, nil, nil
	if err != nil || st == nil {
		return st, out, err
	}
	if keep == nil || keep(out) {
		// What only the computation held (a plan's manifests, stat cache
		// and maps) is garbage now: collected before the fingerprint of
		// every path it looked at is built, the peak is the larger of
		// the two, not their sum (status with no caches at 10k files).
		gcpace.Between(tracker.Looks())
		e.keepAnswers(tracker, append(along, answerToKeep{key: key, path: path, st: st, out: out}))
	} else {
		tracker.Stop() // out may hold it (a plan's stat cache reads through it)
	}
	return st, out, nil
}

// answerToKeep is an answer to keep: its key and file, and the state and
// data it answers with.
type answerToKeep struct {
	key  string
	path fsys.AbsPath
	st   *State
	out  any
}

// keepInSyncAlongside has a computation being kept (status) keep, beside
// its own answer, those of req's plan p and its diff when p has nothing to
// do; st is the state the plan came with (its warnings, before the status
// added its own). They are kept under the status's fingerprint, which
// covers every path the status read, of which theirs are a part: the first
// plan, diff or deploy after the status computes nothing.
func (e *Engine) keepInSyncAlongside(req Request, st *State, p *plan.Plan) {
	if !inSync(p) || e.locked || !e.keepsAnswers() {
		return
	}
	kept := answerState(st.Req, st.Repo, st.Project, st.Profile, st.Targets, slices.Clone(st.Warnings))
	view := &plan.Plan{Profile: p.Profile, Targets: p.Targets, Changes: []plan.Change{}, Summary: p.Summary}
	diff := &DiffData{Profile: p.Profile, Targets: p.Targets, Changes: []DiffChange{}, Summary: p.Summary}
	for _, a := range []struct {
		what string
		out  any
	}{{planKey(req), view}, {diffKey(req), diff}} {
		key := e.answerKey(a.what)
		e.alongside = append(e.alongside, answerToKeep{key: key, path: e.answerPath(key), st: kept, out: a.out})
	}
}

// keepsAnswers reports whether this engine keeps answers on disk: the
// CLI's (the source cache on, no in-process cache), when no kept answer
// may be trusted or written ([Engine.mustCompute]) otherwise.
func (e *Engine) keepsAnswers() bool {
	return e.LoadCache == nil && e.SourceCache != nil && !e.mustCompute()
}

// mustCompute reports a disk no answer may be kept for: a dry run's, or
// one with an interrupted apply to roll back.
func (e *Engine) mustCompute() bool {
	if e.dryRun() {
		return true
	}
	_, err := e.Sys.Stat(abs(e.Env.StateDir()).JoinName("journal.json"))
	return err == nil
}

// answerKey is the full key of a use case's answer: what it was asked,
// the environment and the build. Only for an engine that keeps answers.
func (e *Engine) answerKey(what string) string {
	return what + "\x00" + e.cacheKey(Request{}) + "\x00" + e.SourceCache.Build
}

// planKey names req's plan among kept answers (before [Engine.answerKey]).
func planKey(req Request) string { return fmt.Sprintf("plan\x00%#v", req) }

// diffKey names req's diff among kept answers.
func diffKey(req Request) string { return fmt.Sprintf("diff\x00%#v", req) }

// inSync is the plans worth keeping: an unchanged tree's, a few hundred
// bytes, whose deploy would write nothing, not even a manifest. A plan
// with changes is computed again (its changes carry what JSON does not,
// such as file modes).
func inSync(p *plan.Plan) bool { return len(p.Changes) == 0 && !p.ManifestsBehind }

// PlanView is [Engine.Plan] for a caller that only shows the plan (the
// plan command): when the CLI keeps answers, an in-sync plan is kept on
// disk and answered from there while nothing it read changed. The plan
// has only what its JSON has (no manifests, no stat cache). Most plans
// shown have changes (CI on a fresh machine), so like a diff it is
// computed untracked first. The state returned has no desired state,
// like a kept answer's.
func (e *Engine) PlanView(ctx context.Context, req Request) (*State, *plan.Plan, error) {
	return keptWhenRecomputed(ctx, e, req, planKey(req), func(ctx context.Context) (*State, *plan.Plan, error) {
		st, p, err := e.Plan(ctx, req)
		if err != nil {
			return st, p, err
		}
		// Only what a kept plan has is shown: the desired state and what
		// the plan looked up are let go of before its answer is kept.
		p.Release()
		p.StatCache = nil
		return answerState(st.Req, st.Repo, st.Project, st.Profile, st.Targets, st.Warnings), p, nil
	}, inSync)
}

// keptWhen answers from the kept answer of what when there is a current
// one, else computes and keeps the answer when keep says so; an engine
// that keeps no answers just computes.
func keptWhen[T any](ctx context.Context, e *Engine, what string, compute func(ctx context.Context) (*State, T, error), keep func(T) bool) (*State, T, error) {
	return keptElse(ctx, e, what, compute, func(key string, path fsys.AbsPath) (*State, T, error) {
		return computeAndKeep(ctx, e, key, path, compute, keep)
	})
}

// keptWhenRecomputed is keptWhen for an answer that is seldom kept (an
// empty diff or plan of req): it is computed without a tracking System,
// which would record every path the computation sees (20,000 for a cold
// diff of 10,000 files, most of its answers not kept), and computed again
// through one, from warm caches, only when keep says to keep it. When the
// disk most likely matches req's repo ([Engine.likelyInSync]), the answer
// is likely kept: it is computed once, tracked.
func keptWhenRecomputed[T any](ctx context.Context, e *Engine, req Request, what string, compute func(ctx context.Context) (*State, T, error), keep func(T) bool) (*State, T, error) {
	return keptElse(ctx, e, what, compute, func(key string, path fsys.AbsPath) (*State, T, error) {
		if e.likelyInSync(req) {
			return computeAndKeep(ctx, e, key, path, compute, keep)
		}
		st, out, err := compute(ctx)
		if err != nil || st == nil || !keep(out) {
			return st, out, err
		}
		return computeAndKeep(ctx, e, key, path, compute, keep)
	})
}

// keptElse is the current kept answer of what, else what miss answers
// with the answer's key and path; an engine that keeps no answers just
// computes.
func keptElse[T any](ctx context.Context, e *Engine, what string, compute func(ctx context.Context) (*State, T, error), miss func(key string, path fsys.AbsPath) (*State, T, error)) (*State, T, error) {
	if e.locked || !e.keepsAnswers() {
		return compute(ctx)
	}
	key := e.answerKey(what)
	path := e.answerPath(key)
	st, out, found := keptAnswer[T](e, key, path)
	switch found {
	case answerKept:
		return st, out, nil
	case answerTooLarge:
		return computeUntracked(ctx, e, path, compute)
	}
	return miss(key, path)
}

// computeUntracked computes an answer whose last one was too large to
// keep (a status of thousands of drifted files) without tracking what it
// reads: tracking 24,000 looks at paths for a fingerprint no answer will
// use cost a status of 9,000 pending updates 11% of its time and 2 MiB.
// Once the answer is small enough to keep again, the mark goes and the
// next computation is tracked and kept.
func computeUntracked[T any](ctx context.Context, e *Engine, path fsys.AbsPath, compute func(ctx context.Context) (*State, T, error)) (*State, T, error) {
	st, out, err := compute(ctx)
	e.alongside = nil // answers a status in sync keeps beside its own: none here
	if err == nil && st != nil && !tooLargeToKeep(out) {
		_ = e.Sys.Remove(path)
	}
	return st, out, err
}

// tooLargeToKeep reports an answer sure to be too large to keep, by the
// size its JSON is at least.
func tooLargeToKeep(out any) bool {
	s, ok := out.(sizedAnswer)
	return ok && s.minJSONSize() > maxKeptAnswer
}

// tooLargeMark is what an answer's file holds instead of the answer when
// the last one was too large to keep.
var tooLargeMark = []byte("agentpack: the last answer was too large to keep\n")

// answerFound is what the file of a kept answer held.
type answerFound int

const (
	answerMissed   answerFound = iota // nothing current: compute and keep
	answerKept                        // a current answer
	answerTooLarge                    // the mark of one too large to keep
)

// keptInSync is the kept plan of req when it is current and has no
// changes: a deploy with nothing to do needs neither the lock nor a plan.
func (e *Engine) keptInSync(req Request) (*State, *plan.Plan, bool) {
	if e.locked || !e.keepsAnswers() {
		return nil, nil, false
	}
	key := e.answerKey(planKey(req))
	st, p, found := keptAnswer[*plan.Plan](e, key, e.answerPath(key))
	return st, p, found == answerKept && inSync(p)
}

// planKeepingInSync is Plan for a deploy under the lock, keeping a plan
// with nothing to do so the next deploy (or plan) with nothing to do
// answers from it. When the disk most likely matches already
// ([Engine.likelyInSync]), the plan is made once, through a tracking
// System, and kept when it is in sync. Otherwise it is made untracked (the tracker would hold
// every path a deploy that writes saw) and, when in sync after all, again
// through a tracker.
func (e *Engine) planKeepingInSync(ctx context.Context, req Request) (*State, *plan.Plan, error) {
	if !e.keepsAnswers() {
		return e.Plan(ctx, req)
	}
	key := e.answerKey(planKey(req))
	keep := func() (*State, *plan.Plan, error) {
		st, p, err := computeAndKeep(ctx, e, key, e.answerPath(key), func(ctx context.Context) (*State, *plan.Plan, error) { return e.Plan(ctx, req) }, inSync)
		if p != nil {
			p.Sys = e.Sys // not the tracker
		}
		return st, p, err
	}
	if e.likelyInSync(req) {
		return keep()
	}
	st, p, err := e.Plan(ctx, req)
	if err != nil || !inSync(p) {
		return st, p, err
	}
	return keep()
}

// keptAnswer is the answer of key kept at path, when it decodes and
// nothing it was computed from changed (answerKept), or the mark that the
// last one was too large to keep. The State holds what renderers read
// (repo, project, profile, targets, warnings), no desired state.
func keptAnswer[T any](e *Engine, key string, path fsys.AbsPath) (*State, T, answerFound) {
	var out T
	data, err := e.Sys.ReadFile(path)
	if err != nil {
		return nil, out, answerMissed
	}
	if bytes.Equal(data, tooLargeMark) {
		return nil, out, answerTooLarge
	}
	a, err := sourcecache.DecodeAnswer(data)
	if err != nil || a.Key != key || !a.Stamp.Unchanged(e.Sys) || json.Unmarshal(a.Data, &out) != nil {
		return nil, out, answerMissed
	}
	return answerState(Request{}, a.Repo, a.Project, a.Profile, a.Targets, a.Warnings), out, answerKept
}

// answerState is the State an answer comes with: what a kept answer
// keeps of it, no desired state.
func answerState(req Request, repo string, project fsys.AbsPath, profile string, targets, warnings []string) *State {
	return &State{Req: req, Repo: repo, Project: project, Profile: profile, Targets: targets, Warnings: warnings}
}

// ownCache reports whether a path is one of agentpack's caches, which a
// kept answer's fingerprint leaves out: each vouches only for what its
// own stat data says, and every path behind them (sources, deployed
// files, listed folders, manifests) is in the fingerprint itself. The
// stat cache is written by the very computation an answer is kept from,
// so with it in, no answer would ever be old enough to keep.
func (e *Engine) ownCache() func(fsys.AbsPath) bool {
	caches, stats := abs(e.Env.CacheDir()), plan.StatCachePath(abs(e.Env.StateDir()))
	return func(p fsys.AbsPath) bool { return caches.Contains(p) || stats.Contains(p) }
}

// keepAnswers writes the file of each answer that is small, all under the
// fingerprint of every path tracker saw, when those are old enough to
// trust (see [fsys.TrackingSystem.Fingerprint]); a failure only costs
// speed next time.
func (e *Engine) keepAnswers(tracker *fsys.TrackingSystem, answers []answerToKeep) {
	data := make([][]byte, len(answers))
	keep := false
	for i, a := range answers {
		if tooLargeToKeep(a.out) {
			e.writeCacheFile(a.path, func(w io.Writer) error { _, err := w.Write(tooLargeMark); return err })
			continue
		}
		if d, err := json.Marshal(a.out); err == nil && len(d) <= maxKeptAnswer {
			data[i], keep = d, true
		}
	}
	if !keep {
		return
	}
	fp, ok := tracker.FingerprintWithout(e.Sys, e.SourceCache.racy(), e.ownCache())
	if !ok {
		return
	}
	fp = sourcesFirst(fp, abs(answers[0].st.Repo))
	for i, a := range answers {
		if data[i] == nil {
			continue
		}
		kept := &sourcecache.Answer{Key: a.key, Fingerprint: fp, Repo: a.st.Repo, Project: a.st.Project,
			Profile: a.st.Profile, Targets: a.st.Targets, Warnings: a.st.Warnings, Data: data[i]}
		e.writeCacheFile(a.path, func(w io.Writer) error { return sourcecache.EncodeAnswer(w, kept) })
	}
}

// sourcesFirst is fp with the paths in the repo first, each part in its
// order: a kept answer's check stops at the first path that moved, and the
// sources are what a user edits most (a plan after one edit of 10,000
// sources otherwise stats every target path before it comes to them).
func sourcesFirst(fp *fsys.Fingerprint, repo fsys.AbsPath) *fsys.Fingerprint {
	all := fp.Entries()
	out := make([]fsys.FingerprintEntry, 0, len(all))
	for _, in := range [...]bool{true, false} {
		for _, f := range all {
			if repo.Contains(f.Path) == in {
				out = append(out, f)
			}
		}
	}
	return fsys.NewFingerprint(out)
}

// keepingNone stops tracking the computation being kept when its answer
// is sure to be too large to keep (its JSON at least minJSON bytes): what
// the tracker logged of every path looked at is let go of before the
// answer is built (a status of 9,000 pending updates: 1.5 MiB at 10k).
func (e *Engine) keepingNone(minJSON int) {
	if e.keeping != nil && minJSON > maxKeptAnswer {
		e.keeping.Stop()
	}
}

// sizedAnswer is an answer that tells, before it is encoded, a size its
// JSON is at least: one surely too large to keep is not encoded just to be
// dropped (a status of 9,000 pending updates is 4.7 MB of JSON, whose
// encoding took its peak RSS at 10k to 48-50 MiB instead of 39-40).
type sizedAnswer interface{ minJSONSize() int }

// answerPath is the file of key's kept answer.
func (e *Engine) answerPath(key string) fsys.AbsPath {
	sum := sha256.Sum256([]byte(key))
	return abs(filepath.Join(e.Env.CacheDir(), "answers", hex.EncodeToString(sum[:12])+".bin"))
}
