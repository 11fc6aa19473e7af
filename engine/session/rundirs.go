package session

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/toolward/toolward/schema/results"
)

// runDirsPrefix begins the name of the directory (in os.TempDir) that
// holds one job's run directories (isolation "run").
const runDirsPrefix = "toolward-runs-"

// runDirs is the directory a Source makes its runs' directories in,
// held locked (results.Lock) for the Source's life, so that a later job
// can tell it from a live job's: one left by a job that was killed
// (kill -9 leaves every run directory, each with its seed copy) is
// removed by the next Source that opens (sweepRunDirs).
type runDirs struct {
	dir    string
	unlock func()
}

func openRunDirs() (*runDirs, error) {
	sweepRunDirs(os.TempDir())
	dir, err := os.MkdirTemp("", runDirsPrefix)
	if err != nil {
		return nil, err
	}
	unlock, err := results.Lock(dir)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return &runDirs{dir: dir, unlock: unlock}, nil
}

// close removes the directory with what is left in it, then releases it.
func (r *runDirs) close() {
	if r == nil {
		return
	}
	os.RemoveAll(r.dir)
	r.unlock()
}

// sweepGrace is how old a directory without a lock file must be before
// a sweep removes it: a live job makes its directory, then locks it.
const sweepGrace = time.Minute

// sweepRunDirs removes the run directories of jobs that ended without
// removing them (killed): the directories in tmp named runDirsPrefix…
// whose lock no process holds. Another live job's are left alone; so is
// a directory just made whose job has not locked it yet.
func sweepRunDirs(tmp string) {
	dirs, _ := filepath.Glob(filepath.Join(tmp, runDirsPrefix+"*"))
	for _, d := range dirs {
		fi, err := os.Lstat(d)
		if err != nil || !fi.IsDir() {
			continue
		}
		if _, err := os.Lstat(filepath.Join(d, results.LockFile)); errors.Is(err, fs.ErrNotExist) && time.Since(fi.ModTime()) < sweepGrace {
			continue
		}
		unlock, err := results.Lock(d)
		if err != nil {
			continue // in use, or not ours to take
		}
		os.RemoveAll(d)
		unlock()
	}
}

// MaxSeedBytes bounds the data of server.seed, over all its files (holes
// of sparse files not counted: they are copied as holes), and
// MaxSeedFiles the files and directories it holds. A seed past either is
// refused when the server is opened, before any run.
const (
	MaxSeedBytes = 256 << 20
	MaxSeedFiles = 10_000
)

// checkSeed refuses a seed directory of more than limit bytes of data
// (MaxSeedBytes) or MaxSeedFiles, or holding what copyTree cannot copy.
func checkSeed(dir string, limit int64) error {
	var data int64
	n := 0
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if n++; n > MaxSeedFiles {
			return fmt.Errorf("it holds more than %d files and directories (session.MaxSeedFiles)", MaxSeedFiles)
		}
		switch {
		case d.IsDir():
			return nil
		case !d.Type().IsRegular():
			return fmt.Errorf("%s is not a regular file or directory", p)
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if data += dataSize(fi); data > limit {
			return fmt.Errorf("its files hold more than %s of data, toolward's limit for a seed, which is copied into every run's directory (session.MaxSeedBytes; see docs/limits.md)", amount(limit, "one message"))
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("server.seed %s: %w", dir, err)
	}
	return nil
}

// copyFile copies the regular file at src to a new file dst, its holes
// as holes: a zero block of the source is skipped (copyBlock), and the
// file ends at the source's size.
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if err := copySparse(out, in, fi.Size()); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// copyBlock is the unit copySparse reads, writes or skips.
const copyBlock = 64 << 10

// copySparse copies size bytes of in to out from their starts, leaving a
// hole where a whole block of in is zeros (nextData skips in's own holes
// without reading them where the system says where they are).
func copySparse(out, in *os.File, size int64) error {
	buf := make([]byte, copyBlock)
	for off := int64(0); off < size; {
		next := nextData(in, off, size)
		if next >= size {
			break
		}
		off = next
		n, err := in.ReadAt(buf[:min(int64(len(buf)), size-off)], off)
		if n == 0 && err != nil {
			if err == io.EOF {
				break
			}
			return err
		}
		if !allZero(buf[:n]) {
			if _, err := out.WriteAt(buf[:n], off); err != nil {
				return err
			}
		}
		off += int64(n)
	}
	return out.Truncate(size)
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}
