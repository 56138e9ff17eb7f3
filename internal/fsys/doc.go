// Package fsys is agentpack's one door to the filesystem.
//
// Every byte that engine, targets, snapshots, sources and lockfile read or
// write goes through a [System], so plan, diff, status, deploy and dry run
// share one walk and differ only in the System they are given:
//
//   - [RealSystem] touches the disk; its WriteFile is the one atomic write
//     in the repository (temp file in the destination folder, then rename).
//   - [DryRunSystem] records mutations as [Op] values and writes nothing,
//     while its reads see what was recorded.
//   - [ReadOnlySystem] fails every mutation with E_WRITE_DISABLED.
//   - [MemSystem] is an in-memory filesystem for tests, held to RealSystem's
//     behaviour by a shared conformance test.
//
// Paths are typed: an [AbsPath] is a cleaned absolute OS path and a
// [RelPath] a clean '/'-separated path that cannot leave its base, so a
// relative path or a "../" reaches no System by accident. [CheckBeneath]
// refuses paths that would pass through a symlink inside a managed folder.
// [DirFS] shows a folder of a System as an io/fs file system, for code
// written against fs.FS.
// Errors carry apperr codes from [IOError], with the OS cause kept in the
// message, and still match fs.ErrNotExist and friends with errors.Is.
package fsys
