//go:build !linux

package fsys

import "errors"

// renameNoReplace is not done in one call here: [placeNew] links instead.
func renameNoReplace(tmp, path string) error { return errors.ErrUnsupported }

func isENOTSUP(error) bool { return false }
