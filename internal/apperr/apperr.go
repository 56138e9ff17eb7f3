// Package apperr holds agentpack's one error type and its stable codes.
//
// It is a leaf package so that engine, snapshots and every sub-package can
// return the same typed error without import cycles. Only the CLI's main maps
// codes to exit codes; the envelope carries them verbatim.
package apperr

import (
	"errors"
	"fmt"
)

// Code is a stable machine-readable error code such as E_CONFIG_INVALID.
type Code string

// The stable error codes. The list is mirrored in schemas/envelope.schema.json.
const (
	ConfirmRequired            Code = "E_CONFIRM_REQUIRED"
	AdoptConfirmRequired       Code = "E_ADOPT_CONFIRM_REQUIRED"
	ConfirmTokenRequired       Code = "E_CONFIRM_TOKEN_REQUIRED"
	ConfirmTokenExpired        Code = "E_CONFIRM_TOKEN_EXPIRED"
	ConfirmTokenMismatch       Code = "E_CONFIRM_TOKEN_MISMATCH"
	WriteDisabled              Code = "E_WRITE_DISABLED"
	ConfigMissing              Code = "E_CONFIG_MISSING"
	ConfigInvalid              Code = "E_CONFIG_INVALID"
	ConfigUnsupported          Code = "E_CONFIG_UNSUPPORTED_VERSION"
	LockfileMissing            Code = "E_LOCKFILE_MISSING"
	LockfileInvalid            Code = "E_LOCKFILE_INVALID"
	LockfileUnsupported        Code = "E_LOCKFILE_UNSUPPORTED_VERSION"
	TargetUnsupported          Code = "E_TARGET_UNSUPPORTED"
	DesiredStateConflict       Code = "E_DESIRED_STATE_CONFLICT"
	DriftConflict              Code = "E_DRIFT_CONFLICT"
	ModuleInvalid              Code = "E_MODULE_INVALID"
	SnapshotNotFound           Code = "E_SNAPSHOT_NOT_FOUND"
	SnapshotCorrupted          Code = "E_SNAPSHOT_CORRUPTED"
	Locked                     Code = "E_LOCKED"
	IOPermissionDenied         Code = "E_IO_PERMISSION_DENIED"
	IOInvalidPath              Code = "E_IO_INVALID_PATH"
	IOPathTooLong              Code = "E_IO_PATH_TOO_LONG"
	IOFailed                   Code = "E_IO_FAILED"
	GitCloneFailed             Code = "E_GIT_CLONE_FAILED"
	GitFetchFailed             Code = "E_GIT_FETCH_FAILED"
	GitRefNotFound             Code = "E_GIT_REF_NOT_FOUND"
	Network                    Code = "E_NETWORK"
	SourceNotFound             Code = "E_SOURCE_NOT_FOUND"
	SourceAlreadyExists        Code = "E_SOURCE_ALREADY_EXISTS"
	SourceURLInvalid           Code = "E_SOURCE_URL_INVALID"
	CacheCorrupted             Code = "E_CACHE_CORRUPTED"
	PackageNotFound            Code = "E_PACKAGE_NOT_FOUND"
	PackageNotInstalled        Code = "E_PACKAGE_NOT_INSTALLED"
	ManifestNotFound           Code = "E_MANIFEST_NOT_FOUND"
	ManifestInvalid            Code = "E_MANIFEST_INVALID"
	RegistryNotConfigured      Code = "E_REGISTRY_NOT_CONFIGURED"
	RegistryNotFound           Code = "E_REGISTRY_NOT_FOUND"
	RegistryUnreachable        Code = "E_REGISTRY_UNREACHABLE"
	RegistryAuthRequired       Code = "E_REGISTRY_AUTH_REQUIRED"
	PackageVersionExists       Code = "E_PACKAGE_VERSION_EXISTS"
	DependencyConflict         Code = "E_DEPENDENCY_CONFLICT"
	ChecksumMismatch           Code = "E_CHECKSUM_MISMATCH"
	InvalidArgument            Code = "E_INVALID_ARGUMENT"
	NotInitialized             Code = "E_NOT_INITIALIZED"
	ImportConflict             Code = "E_IMPORT_CONFLICT"
	ModuleAlreadyExists        Code = "E_MODULE_ALREADY_EXISTS"
	ModuleNotFound             Code = "E_MODULE_NOT_FOUND"
	OverlayNotFound            Code = "E_OVERLAY_NOT_FOUND"
	OverlayBaselineMissing     Code = "E_OVERLAY_BASELINE_MISSING"
	OverlayBaselineUnsupported Code = "E_OVERLAY_BASELINE_UNSUPPORTED"
	OverlayRebaseConflict      Code = "E_OVERLAY_REBASE_CONFLICT"
	OverlayPatchApplyFailed    Code = "E_OVERLAY_PATCH_APPLY_FAILED"
	GitRepoRequired            Code = "E_GIT_REPO_REQUIRED"
	GitWorktreeDirty           Code = "E_GIT_WORKTREE_DIRTY"
	Unexpected                 Code = "E_UNEXPECTED"
)

// Error is the one error type agentpack returns for known failures.
type Error struct {
	Code    Code
	Message string
	// Hint is one line telling the user what to do next.
	Hint string
	// Details is copied into the envelope's errors[].details.
	Details map[string]any
	// Err is the underlying cause, if any.
	Err error
}

// New returns an Error with a formatted message.
func New(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Wrap returns an Error whose cause is err.
func Wrap(err error, code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...), Err: err}
}

// WithHint sets the one-line hint and returns e.
func (e *Error) WithHint(format string, args ...any) *Error {
	e.Hint = fmt.Sprintf(format, args...)
	return e
}

// With adds a detail key and returns e.
func (e *Error) With(key string, value any) *Error {
	if e.Details == nil {
		e.Details = map[string]any{}
	}
	e.Details[key] = value
	return e
}

// Error implements error.
func (e *Error) Error() string {
	if e.Err != nil {
		return e.Message + ": " + e.Err.Error()
	}
	return e.Message
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// As returns the *Error inside err, or an E_UNEXPECTED Error wrapping it.
func As(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Code: Unexpected, Message: err.Error(), Err: err}
}

// CodeOf returns the code of err, or "" when err is nil.
func CodeOf(err error) Code {
	if err == nil {
		return ""
	}
	return As(err).Code
}
