// The dynamic loader's search for a DT_NEEDED name, explained the way libtree does:
// the file glibc's ld.so would pick, why, and every place it tried first.
// Rules (glibc elf/dl-load.c _dl_map_object, elf/get-dynamic-info.h, man 8 ld.so):
//   a name with a '/' is opened as it is; a name already loaded is reused; otherwise
//   1. DT_RPATH of the needing object, then of the object that loaded it, and on up to the
//      main program: only when the needing object has no DT_RUNPATH, and an object's own
//      DT_RPATH is ignored when that object has a DT_RUNPATH;
//   2. LD_LIBRARY_PATH ($ORIGIN there is the main program's folder);
//   3. the needing object's own DT_RUNPATH (never its loaders');
//   4. /etc/ld.so.cache;  5. the default folders.
// Each folder's glibc-hwcaps/<level> subfolders are tried first (glibc 2.33+). A candidate
// of another ELF class or machine is skipped; one that is not ELF at all ends the search with
// the loader's fatal "invalid ELF header".
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "symbols/elf_file.h"
#include "symbols/ld_cache.h"
#include "symbols/result.h"

namespace cudashim::symbols {

// Why a file was chosen (or a folder tried).
enum class SearchReason { direct_path, rpath, ld_library_path, runpath, ld_so_cache, default_path, already_loaded, not_found };

// "rpath", "LD_LIBRARY_PATH", "runpath", "ld.so.cache", "default path", ... (libtree's words).
const char* reason_name(SearchReason reason);

// What the loader sees of its environment. Nothing here is read from the process:
// the caller passes LD_LIBRARY_PATH and the cache in, so that tests can fake both.
struct SearchEnv {
  std::string ld_library_path;            // raw value ("" = unset); an empty element means "."
  std::optional<LdCache> cache;           // nullopt = no /etc/ld.so.cache
  // The defaults are the build architecture's loader's (Debian multiarch): the doctor
  // checks the machine it runs on.
#if defined(__aarch64__)
  std::vector<std::string> default_dirs = {"/lib/aarch64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/lib",
                                           "/usr/lib", "/lib64", "/usr/lib64"};
  std::string lib_token = "lib/aarch64-linux-gnu";  // what $LIB expands to (Debian multiarch)
  std::string platform = "aarch64";                 // what $PLATFORM expands to
  std::vector<std::string> hwcaps_subdirs = {};     // glibc 2.36 defines no AArch64 hwcaps levels
#else
  std::vector<std::string> default_dirs = {"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib",
                                           "/usr/lib", "/lib64", "/usr/lib64"};
  std::string lib_token = "lib/x86_64-linux-gnu";  // what $LIB expands to (Debian multiarch)
  std::string platform = "x86_64";                 // what $PLATFORM expands to
  std::vector<std::string> hwcaps_subdirs = {"glibc-hwcaps/x86-64-v4", "glibc-hwcaps/x86-64-v3",
                                             "glibc-hwcaps/x86-64-v2"};
#endif
  std::string main_program_dir;  // for $ORIGIN in LD_LIBRARY_PATH; "" = the root's folder
};

// One place the search looked at, in the loader's order.
struct SearchAttempt {
  std::string dir;          // the folder after $ORIGIN/$LIB/$PLATFORM expansion ("" for the cache)
  std::string path;         // the candidate file
  SearchReason reason;      // which list the folder came from
  std::string from;         // whose list: the object's path for rpath/runpath, else ""
  std::string outcome;      // "found", "no such file", "skipped: ELFCLASS32 (need 64-bit)", ...
};

// The answer for one name.
struct Resolution {
  std::string name;             // the DT_NEEDED (or dlopen) name
  std::string path;             // the chosen file; "" when not found
  SearchReason reason = SearchReason::not_found;
  std::string from;             // for rpath/runpath: the object whose list held the folder
  std::vector<SearchAttempt> tried;  // every candidate, in order, the chosen one last
  std::string error;            // a fatal error that ended the search, e.g. "<path>: invalid ELF header"
  bool found() const { return !path.empty(); }
};

// The folder $ORIGIN means for `obj`: the folder of the main program's real path when `obj`
// has a PT_INTERP (an executable), else the folder of the path it was found at, made
// absolute but not resolved (glibc's l_origin for libraries keeps symlinked folders).
std::string origin_of(const ElfFacts& obj);

// Expands $ORIGIN/${ORIGIN}, $LIB/${LIB}, $PLATFORM/${PLATFORM} in one search-path element.
// Returns nullopt for an unknown $TOKEN (the loader drops such an element).
std::optional<std::string> expand_tokens(std::string_view element, const std::string& origin, const SearchEnv& env);

// Where the loader finds `name` for `needing`. `loaders` are the objects that caused
// `needing` to be loaded, nearest first, ending with the main program (empty when
// `needing` is the main program or was dlopen()ed by it). Never fails: not found is a result.
Resolution find_library(std::string_view name, const ElfFacts& needing, const std::vector<const ElfFacts*>& loaders,
                        const SearchEnv& env);

// One object of a load tree.
struct LoadedObject {
  std::string name;        // the DT_NEEDED name that loaded it (the root: its path)
  Resolution resolution;   // how it was found (the root: direct_path)
  std::shared_ptr<const ElfFacts> facts;  // null when not found or unreadable
  std::string error;       // read_elf's error for a found but unreadable file
  int parent = -1;         // index of the object whose DT_NEEDED loaded it; -1 for the root
  int depth = 0;
  // What each of its DT_NEEDED names binds to, in file order: the search that loaded it, or
  // reason already_loaded with the path of the object loaded earlier under that name.
  std::vector<Resolution> needed;
};

// Everything the loader maps for `root_path` at start-up, in its breadth-first order.
struct LoadTree {
  std::vector<LoadedObject> objects;     // [0] is the root
  std::map<std::string, int> by_name;    // every name an object answers to (needed name, soname)
  // The index of the object the loader binds `name` to, or -1.
  int find(std::string_view name) const;
  // The loaders chain of object `index`: its parent, grandparent, ..., the root.
  std::vector<const ElfFacts*> loaders_of(int index) const;
};

// Facts already read, by path as found, shared between trees (a scan resolves many).
struct FactsCacheEntry {
  std::shared_ptr<const ElfFacts> facts;  // null when unreadable
  std::string error;
};
using FactsCache = std::map<std::string, FactsCacheEntry>;

// read_elf through `cache` (nullptr: no cache).
FactsCacheEntry read_elf_cached(const std::string& path, FactsCache* cache);

// Resolves every DT_NEEDED of `root_path` recursively, breadth-first like the loader: each
// name is looked up once per process and the first object loaded under a name wins (later
// needers get already_loaded). Error only when the root itself cannot be read; a missing
// dependency is an object with reason not_found. At most `max_objects` objects.
Result<LoadTree> resolve_tree(const std::string& root_path, const SearchEnv& env, FactsCache* cache = nullptr,
                              std::size_t max_objects = 4096);

}  // namespace cudashim::symbols
