package snapshots

import "github.com/agentpack/agentpack/internal/jsonstream"

// AppendJSON appends f as encoding/json writes it (a
// [jsonstream.Appender]): the files of a deploy's journal and record are
// most of its JSON, and encoding/json's reflection and indent pass were
// most of the 10 ms each of them took at 10,000 files.
func (f *FileChange) AppendJSON(dst []byte, prefix, indent string, escapeHTML bool) ([]byte, error) {
	w := jsonstream.NewObjectWriter(dst, prefix, indent, escapeHTML)
	w.Open()
	w.String("target", f.Target)
	w.String("root", f.Root)
	w.String("path", f.Path)
	w.String("op", f.Op)
	appendContent(&w, "before", f.Before)
	appendContent(&w, "after", f.After)
	if f.Manifest {
		w.Bool("manifest", true)
	}
	w.Close()
	return w.Buf, nil
}

// appendContent writes the field k of a [FileChange] with c.
func appendContent(w *jsonstream.ObjectWriter, k string, c *Content) {
	if c == nil {
		w.Null(k)
		return
	}
	w.Key(k)
	w.Open()
	w.String("sha256", c.SHA256)
	w.Int("mode", int64(c.Mode))
	w.Int("size", c.Size)
	if c.Delta != nil {
		w.Key("delta")
		w.Open()
		w.String("base", c.Delta.Base)
		w.String("sha256", c.Delta.SHA256)
		w.Close()
	}
	w.Close()
}
