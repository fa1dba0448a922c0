// json_writer_test.cpp: the JSON writer's layouts and its escaping, exactly as the report,
// the event stream and the trace print them (byte for byte: tests/hygiene/compare_reports.py
// compares reports across builds).
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <string>

#include "recorder/json_writer.h"
#include "recorder/utf8.h"

using namespace cudashim;

TEST_CASE("members on one line are separated by \", \"", "[json]") {
  std::string out;
  {
    JsonWriter w(out);
    auto o = w.object();
    w.member("pid", 42);
    w.member("rank", nullptr);
    w.member("host", "box");
    w.member("on", true);
    w.key("argv");
    {
      auto a = w.array();
      w.value("a");
      w.value(std::string("b"));
    }
    w.key("empty");
    { auto e = w.object(); }
    w.member("share", JsonFixed{0.123456, 4});
    w.member("neg", int64_t{-5});
    w.member("big", ~0ull);
  }
  CHECK(out == R"({"pid": 42, "rank": null, "host": "box", "on": true, "argv": ["a", "b"], "empty": {}, )"
               R"("share": 0.1235, "neg": -5, "big": 18446744073709551615})");
  CHECK(nlohmann::json::parse(out)["big"] == ~0ull);
}

TEST_CASE("a container on lines puts each element on its own line, its bracket two spaces back", "[json]") {
  std::string out;
  {
    JsonWriter w(out);
    auto top = w.object(json_lines(2));
    w.member("schema", "x/1");
    w.key("list");
    {
      auto l = w.array(json_lines(4));
      w.value(1);
      { auto o = w.object(); w.member("k", 2); }
    }
    w.key("none");
    { auto l = w.array(json_lines(4)); }
  }
  CHECK(out == "{\n  \"schema\": \"x/1\",\n  \"list\": [\n    1,\n    {\"k\": 2}\n  ],\n  \"none\": []\n}");
  std::string trace;
  {
    JsonWriter w(trace);
    auto a = w.array(json_lines(0));
    w.value(1);
    w.value(2);
  }
  CHECK(trace == "[\n1,\n2\n]");
}

TEST_CASE("strings are escaped: quotes, backslashes, control characters; other bytes pass", "[json]") {
  std::string out;
  JsonWriter w(out);
  const char raw[] = "a\"b\\c\nd\te\rf\x01g\x1f\x7f\xc3\xa9";
  w.string(std::string_view(raw, sizeof raw - 1));
  CHECK(out == "\"a\\\"b\\\\c\\nd\\te\\rf\\u0001g\\u001f\x7f\xc3\xa9\"");
  CHECK(nlohmann::json::parse(out) == std::string(raw, sizeof raw - 1));
  std::string key;
  JsonWriter k(key);
  { auto o = k.object(); k.member("we\"ird", static_cast<const char*>(nullptr)); }
  CHECK(key == "{\"we\\\"ird\": null}");
}

TEST_CASE("a byte outside well-formed UTF-8 becomes the text \\xNN: the document stays valid JSON", "[json]") {
  // One case per rule of Unicode's table 3-7, each between two ASCII letters.
  struct Case {
    const char* raw;
    const char* json;  // what the writer prints for it
  } cases[] = {
      {"a\xff" "b", R"("a\\xffb")"},                  // never a UTF-8 byte
      {"a\x80" "b", R"("a\\x80b")"},                  // a continuation byte alone
      {"a\xc3", R"("a\\xc3")"},                       // a sequence cut short at the end
      {"a\xc3" "b", R"("a\\xc3b")"},                  // ... and in the middle
      {"a\xc0\xaf" "b", R"("a\\xc0\\xafb")"},         // overlong '/'
      {"a\xe0\x80\xaf" "b", R"("a\\xe0\\x80\\xafb")"},  // overlong, 3 bytes
      {"a\xed\xa0\x80" "b", R"("a\\xed\\xa0\\x80b")"},  // a surrogate, U+D800
      {"a\xf4\x90\x80\x80" "b", R"("a\\xf4\\x90\\x80\\x80b")"},  // past U+10FFFF
      {"a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80" "b", "\"a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80" "b\""},  // valid: as is
  };
  for (const Case& c : cases) {
    std::string out;
    JsonWriter w(out);
    w.string(c.raw);
    CHECK(out == c.json);
    const auto parsed = nlohmann::json::parse(out);  // nlohmann refuses ill-formed UTF-8: this must not throw
    CHECK(parsed.get<std::string>() == utf8_text(c.raw));
    CHECK(utf8_bytes_back(parsed.get<std::string>()) == c.raw);  // the bytes come back
  }
  // Keys too (an environment variable's name, a file name as a key).
  std::string key;
  JsonWriter k(key);
  { auto o = k.object(); k.member("caf\xe9", 1); }
  CHECK(key == R"({"caf\\xe9": 1})");
}
