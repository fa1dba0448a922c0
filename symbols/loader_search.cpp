#include "symbols/loader_search.h"

#include <elf.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "symbols/bounded_read.h"

namespace cudashim::symbols {
namespace fs = std::filesystem;

namespace {

// Splits a search path at ':' (and ';', as glibc's fillin_rpath does); an empty element is "."
// (the current folder), as for the loader.
std::vector<std::string> split_path_list(std::string_view list) {
  std::vector<std::string> out;
  if (list.empty()) return out;
  std::size_t start = 0;
  while (start <= list.size()) {
    std::size_t end = list.find_first_of(":;", start);
    if (end == std::string_view::npos) end = list.size();
    std::string_view element = list.substr(start, end - start);
    out.emplace_back(element.empty() ? std::string(".") : std::string(element));
    start = end + 1;
  }
  return out;
}

// Why `path` is not a usable candidate for an object of `elf_class`/`machine`; "" when it is.
// The loader opens the file and checks e_ident and e_machine (elf/dl-load.c open_verify):
// another class or machine makes it go on searching; a file that is not ELF at all, or too
// short, or of the other byte order, is a fatal error ("invalid ELF header") that ends the
// search. `fatal` tells which.
std::string candidate_problem(const std::string& path, int elf_class, std::uint16_t machine, bool& fatal) {
  fatal = false;
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return "no such file";
  if (!S_ISREG(st.st_mode)) return "skipped: not a regular file";
  const OpenedFile opened = open_regular(path.c_str());  // never a FIFO or a device (bounded_read.h)
  if (opened.fd < 0)
    return opened.err != 0 ? std::string("skipped: cannot open (") + std::strerror(opened.err) + ")"
                           : "skipped: not a regular file";
  const int fd = opened.fd;
  unsigned char hdr[64] = {};
  ssize_t got = pread(fd, hdr, sizeof hdr, 0);
  close(fd);
  fatal = true;
  if (got < SELFMAG || std::memcmp(hdr, ELFMAG, SELFMAG) != 0) return "invalid ELF header";
  if (got < static_cast<ssize_t>(sizeof hdr)) return "file too short";
  const int cls = hdr[EI_CLASS] == ELFCLASS64 ? 64 : hdr[EI_CLASS] == ELFCLASS32 ? 32 : 0;
  fatal = false;
  if (elf_class != 0 && cls != elf_class)
    return "skipped: ELFCLASS" + std::to_string(cls) + ", need ELFCLASS" + std::to_string(elf_class);
  fatal = true;
  if (hdr[EI_DATA] != ELFDATA2LSB) return "ELF file data encoding not little-endian";
  fatal = false;
  const std::uint16_t m = static_cast<std::uint16_t>(hdr[18] | (hdr[19] << 8));
  if (machine != 0 && m != machine)
    return "skipped: machine " + std::to_string(m) + ", need " + std::to_string(machine);
  return "";
}

// Checks one candidate file and records the attempt. True when the search ends here: the file
// is picked, or it is a fatal error (then `out.error` says so and no path is set).
bool try_candidate(const std::string& dir, const std::string& candidate, SearchReason reason, const std::string& from,
                   const ElfFacts& needing, Resolution& out) {
  bool fatal = false;
  std::string problem = candidate_problem(candidate, needing.elf_class, needing.machine, fatal);
  out.tried.push_back(SearchAttempt{dir, candidate, reason, from, problem.empty() ? "found" : fatal ? "error: " + problem : problem});
  if (fatal) {
    out.error = candidate + ": " + problem;
    out.reason = SearchReason::not_found;
    return true;
  }
  if (!problem.empty()) return false;
  out.path = candidate;
  out.reason = reason;
  out.from = from;
  return true;
}

bool is_dir(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::string join(const std::string& dir, std::string_view name) {
  if (dir.empty() || dir.back() == '/') return dir + std::string(name);
  return dir + "/" + std::string(name);
}

// Searches one folder (its glibc-hwcaps subfolders first). True when `name` was found there.
bool try_dir(const std::string& dir, std::string_view name, SearchReason reason, const std::string& from,
             const ElfFacts& needing, const SearchEnv& env, Resolution& out) {
  auto try_file = [&](const std::string& d) { return try_candidate(d, join(d, name), reason, from, needing, out); };
  for (const auto& sub : env.hwcaps_subdirs) {
    std::string d = join(dir, sub);
    if (is_dir(d) && try_file(d)) return true;  // absent hwcaps folders are not listed: noise
  }
  return try_file(dir);
}

// Searches the elements of one DT_RPATH/DT_RUNPATH/LD_LIBRARY_PATH list.
bool try_list(std::string_view list, const std::string& origin, std::string_view name, SearchReason reason,
              const std::string& from, const ElfFacts& needing, const SearchEnv& env, Resolution& out) {
  for (const auto& element : split_path_list(list)) {
    auto dir = expand_tokens(element, origin, env);
    if (!dir) {
      out.tried.push_back(SearchAttempt{element, "", reason, from, "skipped: unknown $token"});
      continue;
    }
    if (try_dir(*dir, name, reason, from, needing, env, out)) return true;
  }
  return false;
}

bool has_token(std::string_view s, std::string_view token, std::size_t pos, std::size_t& len) {
  std::string braced = "{" + std::string(token) + "}";
  if (s.substr(pos, braced.size()) == braced) {
    len = braced.size();
    return true;
  }
  if (s.substr(pos, token.size()) == token) {
    const std::size_t after = pos + token.size();
    // $ORIGINAL is not $ORIGIN: the token must end at a non-identifier character.
    if (after < s.size() && (std::isalnum(static_cast<unsigned char>(s[after])) || s[after] == '_')) return false;
    len = token.size();
    return true;
  }
  return false;
}

}  // namespace

const char* reason_name(SearchReason reason) {
  switch (reason) {
    case SearchReason::direct_path: return "direct path";
    case SearchReason::rpath: return "rpath";
    case SearchReason::ld_library_path: return "LD_LIBRARY_PATH";
    case SearchReason::runpath: return "runpath";
    case SearchReason::ld_so_cache: return "ld.so.cache";
    case SearchReason::default_path: return "default path";
    case SearchReason::already_loaded: return "already loaded";
    case SearchReason::not_found: return "not found";
  }
  return "?";
}

std::string origin_of(const ElfFacts& obj) {
  std::error_code ec;
  fs::path p = obj.path;
  if (!obj.interp.empty()) {
    fs::path real = fs::canonical(p, ec);
    if (!ec) return real.parent_path().string();
  }
  fs::path abs = fs::absolute(p, ec);
  if (ec) abs = p;
  return abs.lexically_normal().parent_path().string();
}

std::optional<std::string> expand_tokens(std::string_view element, const std::string& origin, const SearchEnv& env) {
  std::string out;
  std::size_t i = 0;
  while (i < element.size()) {
    if (element[i] != '$') {
      out.push_back(element[i++]);
      continue;
    }
    std::size_t len = 0;
    if (has_token(element, "ORIGIN", i + 1, len)) {
      out += origin;
    } else if (has_token(element, "LIB", i + 1, len)) {
      out += env.lib_token;
    } else if (has_token(element, "PLATFORM", i + 1, len)) {
      out += env.platform;
    } else {
      return std::nullopt;
    }
    i += 1 + len;
  }
  return out;
}

Resolution find_library(std::string_view name, const ElfFacts& needing, const std::vector<const ElfFacts*>& loaders,
                        const SearchEnv& env) {
  Resolution out;
  out.name = std::string(name);
  if (name.empty()) return out;
  if (name.find('/') != std::string_view::npos) {  // a path: opened as it is, relative to the current folder
    try_candidate(fs::path(name).parent_path().string(), std::string(name), SearchReason::direct_path, "", needing, out);
    return out;
  }

  // 1. DT_RPATH up the loaders chain, unless the needing object has a DT_RUNPATH.
  if (needing.runpath.empty()) {
    std::vector<const ElfFacts*> chain{&needing};
    chain.insert(chain.end(), loaders.begin(), loaders.end());
    for (const ElfFacts* obj : chain) {
      if (obj == nullptr || obj->rpath.empty() || !obj->runpath.empty()) continue;  // RUNPATH voids RPATH
      if (try_list(obj->rpath, origin_of(*obj), name, SearchReason::rpath, obj->path, needing, env, out)) return out;
    }
  }
  // 2. LD_LIBRARY_PATH; its $ORIGIN is the main program's folder.
  if (!env.ld_library_path.empty()) {
    std::string main_dir = env.main_program_dir;
    if (main_dir.empty()) main_dir = origin_of(loaders.empty() || loaders.back() == nullptr ? needing : *loaders.back());
    if (try_list(env.ld_library_path, main_dir, name, SearchReason::ld_library_path, "", needing, env, out)) return out;
  }
  // 3. The needing object's own DT_RUNPATH.
  if (!needing.runpath.empty() &&
      try_list(needing.runpath, origin_of(needing), name, SearchReason::runpath, needing.path, needing, env, out))
    return out;
  // 4. /etc/ld.so.cache.
  if (env.cache) {
    auto flags = ld_cache_flags_for(needing.elf_class, needing.machine);
    auto hit = flags ? ld_cache_lookup(*env.cache, name, *flags) : std::nullopt;
    if (hit) {
      if (try_candidate("", *hit, SearchReason::ld_so_cache, env.cache->path, needing, out)) return out;
    } else {
      out.tried.push_back(SearchAttempt{"", "", SearchReason::ld_so_cache, env.cache->path, "no entry"});
    }
  }
  // 5. The default folders.
  for (const auto& dir : env.default_dirs)
    if (try_dir(dir, name, SearchReason::default_path, "", needing, env, out)) return out;
  out.reason = SearchReason::not_found;
  return out;
}

int LoadTree::find(std::string_view name) const {
  auto it = by_name.find(std::string(name));
  return it == by_name.end() ? -1 : it->second;
}

std::vector<const ElfFacts*> LoadTree::loaders_of(int index) const {
  std::vector<const ElfFacts*> chain;
  int guard = 0;
  for (int i = index >= 0 && index < static_cast<int>(objects.size()) ? objects[index].parent : -1;
       i >= 0 && guard < static_cast<int>(objects.size()); i = objects[i].parent, ++guard)
    if (objects[i].facts) chain.push_back(objects[i].facts.get());
  return chain;
}

FactsCacheEntry read_elf_cached(const std::string& path, FactsCache* cache) {
  if (cache != nullptr) {
    auto it = cache->find(path);
    if (it != cache->end()) return it->second;
  }
  FactsCacheEntry entry;
  auto facts = read_elf(path);
  if (facts.ok())
    entry.facts = std::make_shared<const ElfFacts>(std::move(facts).value());
  else
    entry.error = facts.error();
  if (cache != nullptr) cache->emplace(path, entry);
  return entry;
}

Result<LoadTree> resolve_tree(const std::string& root_path, const SearchEnv& env, FactsCache* cache,
                              std::size_t max_objects) {
  auto root = read_elf_cached(root_path, cache);
  if (!root.facts) return Error{root.error};
  LoadTree tree;
  LoadedObject first;
  first.name = root_path;
  first.resolution.name = root_path;
  first.resolution.path = root_path;
  first.resolution.reason = SearchReason::direct_path;
  first.facts = root.facts;
  tree.objects.push_back(std::move(first));
  tree.by_name[root_path] = 0;
  if (!tree.objects[0].facts->soname.empty()) tree.by_name.emplace(tree.objects[0].facts->soname, 0);

  std::map<std::string, int> by_real_path;  // the loader also reuses the same file under another name
  auto remember_real = [&](const std::string& path, int index) {
    std::error_code ec;
    fs::path real = fs::canonical(path, ec);
    if (!ec) by_real_path.emplace(real.string(), index);
  };
  remember_real(root_path, 0);

  for (std::size_t i = 0; i < tree.objects.size(); ++i) {  // breadth-first: the list is the queue
    const std::shared_ptr<const ElfFacts> needing = tree.objects[i].facts;
    if (!needing) continue;
    for (const auto& name : needing->needed) {
      if (auto it = tree.by_name.find(name); it != tree.by_name.end()) {  // already loaded: the first one wins
        Resolution r;
        r.name = name;
        r.path = tree.objects[it->second].resolution.path;
        r.reason = SearchReason::already_loaded;
        tree.objects[i].needed.push_back(std::move(r));
        continue;
      }
      if (tree.objects.size() >= max_objects) return tree;
      LoadedObject obj;
      obj.name = name;
      obj.parent = static_cast<int>(i);
      obj.depth = tree.objects[i].depth + 1;
      obj.resolution = find_library(name, *needing, tree.loaders_of(static_cast<int>(i)), env);
      const int index = static_cast<int>(tree.objects.size());
      if (obj.resolution.found()) {
        std::error_code ec;
        fs::path real = fs::canonical(obj.resolution.path, ec);
        auto same = ec ? by_real_path.end() : by_real_path.find(real.string());
        if (same != by_real_path.end()) {  // same file already mapped under another name
          tree.by_name[name] = same->second;
          tree.objects[i].needed.push_back(obj.resolution);
          continue;
        }
        auto facts = read_elf_cached(obj.resolution.path, cache);
        obj.facts = facts.facts;
        obj.error = facts.error;
        remember_real(obj.resolution.path, index);
      }
      tree.by_name[name] = index;
      if (obj.facts && !obj.facts->soname.empty()) tree.by_name.emplace(obj.facts->soname, index);
      tree.objects[i].needed.push_back(obj.resolution);
      tree.objects.push_back(std::move(obj));
    }
  }
  return tree;
}

}  // namespace cudashim::symbols
