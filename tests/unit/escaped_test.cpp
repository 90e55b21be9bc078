// SPDX-License-Identifier: Apache-2.0
// escaped() (src/support/format.h): untrusted text in log lines and error messages
// never carries a control character, an escape sequence, malformed UTF-8 or
// an invisible line or direction change; printable text is kept as it is.
// quoted() (src/support/env_list.h), which every environment error uses, escapes too.
#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "support/env_list.h"
#include "support/format.h"

namespace anydev::core {
namespace {

using namespace std::string_literals;

// No byte of the result is a control character (C0 or DEL), and no C1
// control or bidirectional override survives in UTF-8 form.
bool Inert(std::string_view text) {
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 || c == 0x7F) return false;
    if (c == 0xC2 && i + 1 < text.size()) {
      const auto next = static_cast<unsigned char>(text[i + 1]);
      if (next >= 0x80 && next <= 0x9F) return false;
    }
    if (c == 0xE2 && i + 2 < text.size() && static_cast<unsigned char>(text[i + 1]) == 0x80) {
      const auto last = static_cast<unsigned char>(text[i + 2]);
      if (last >= 0xA8 && last <= 0xAE) return false;
    }
  }
  return true;
}

TEST(Escaped, KeepsPrintableText) {
  EXPECT_EQ(escaped("cuda:1,cpu"), "cuda:1,cpu");
  EXPECT_EQ(escaped("/tmp/trace file.json"), "/tmp/trace file.json");
  EXPECT_EQ(escaped("\"quoted\" 'x' ~!@#$%^&*()"), "\"quoted\" 'x' ~!@#$%^&*()");
  EXPECT_EQ(escaped(""), "");
}

TEST(Escaped, KeepsPrintableUtf8) {
  EXPECT_EQ(escaped("caf\xc3\xa9"), "caf\xc3\xa9");                            // é
  EXPECT_EQ(escaped("\xe6\x97\xa5\xe6\x9c\xac"), "\xe6\x97\xa5\xe6\x9c\xac");  // 日本
  EXPECT_EQ(escaped("\xf0\x9f\x9a\x80"), "\xf0\x9f\x9a\x80");                  // U+1F680
  EXPECT_EQ(escaped("\xc2\xa0"), "\xc2\xa0");                                  // U+00A0
}

TEST(Escaped, EscapesBackslashAndWhitespaceControls) {
  EXPECT_EQ(escaped("a\\b"), "a\\\\b");
  EXPECT_EQ(escaped("line\nforged [anydev] [info] ok"), "line\\nforged [anydev] [info] ok");
  EXPECT_EQ(escaped("a\rb\tc"), "a\\rb\\tc");
}

TEST(Escaped, EscapesEveryOtherControlCharacter) {
  for (int c = 0; c < 0x20; ++c) {
    if (c == '\n' || c == '\r' || c == '\t') continue;
    const std::string text(1, static_cast<char>(c));
    const std::string result = escaped(text);
    char expected[8];
    std::snprintf(expected, sizeof expected, "\\x%02x", c);
    EXPECT_EQ(result, expected) << c;
  }
  EXPECT_EQ(escaped("\x7f"), "\\x7f");
  EXPECT_EQ(escaped("\0"s), "\\x00");
}

TEST(Escaped, EscapesTerminalEscapeSequences) {
  EXPECT_EQ(escaped("\x1b[2J\x1b[31mred"), "\\x1b[2J\\x1b[31mred");
  EXPECT_EQ(escaped("\x1b]0;title\x07"), "\\x1b]0;title\\x07");
  EXPECT_EQ(escaped("\xc2\x9b"
                    "31m"),
            "\\xc2\\x9b31m");           // CSI as a UTF-8 C1 control
  EXPECT_EQ(escaped("\x9b"), "\\x9b");  // CSI as a lone byte
}

TEST(Escaped, EscapesInvisibleLineAndDirectionChanges) {
  EXPECT_EQ(escaped("\xe2\x80\xae"
                    "evil"),
            "\\xe2\\x80\\xae"
            "evil");                                      // U+202E
  EXPECT_EQ(escaped("\xe2\x81\xa6"), "\\xe2\\x81\\xa6");  // U+2066
  EXPECT_EQ(escaped("\xe2\x80\xa8"), "\\xe2\\x80\\xa8");  // U+2028
  EXPECT_EQ(escaped("\xe2\x80\xa9"), "\\xe2\\x80\\xa9");  // U+2029
}

TEST(Escaped, EscapesMalformedUtf8ByteByByte) {
  EXPECT_EQ(escaped("\xc3"), "\\xc3");                    // truncated
  EXPECT_EQ(escaped("\xc0\xaf"), "\\xc0\\xaf");           // overlong '/'
  EXPECT_EQ(escaped("\xed\xa0\x80"), "\\xed\\xa0\\x80");  // surrogate
  EXPECT_EQ(escaped("\xf5\x80\x80\x80"), "\\xf5\\x80\\x80\\x80");
  EXPECT_EQ(escaped("\xe6\x97"
                    "x"),
            "\\xe6\\x97x");
  EXPECT_EQ(escaped("\xff\xfe"), "\\xff\\xfe");
}

TEST(Escaped, EveryByteGivesInertText) {
  for (int a = 0; a < 256; ++a) {
    for (int b : {0x00, 0x1b, 0x41, 0x80, 0x9b, 0xa0, 0xbf, 0xc2, 0xe2}) {
      const std::string text{static_cast<char>(a), static_cast<char>(b)};
      EXPECT_TRUE(Inert(escaped(text))) << a << " " << b;
    }
  }
}

TEST(ControlsEscaped, EscapesControlsButKeepsNewlinesAndEscapedText) {
  EXPECT_EQ(controls_escaped("plain\nsecond line"), "plain\nsecond line");
  EXPECT_EQ(controls_escaped("already \\x1b escaped"), "already \\x1b escaped");
  EXPECT_EQ(controls_escaped("\x1b[2Jcleared\rover\x7f"), "\\x1b[2Jcleared\\x0dover\\x7f");
  EXPECT_EQ(controls_escaped(std::string("a\0b", 3)), "a\\x00b");
}

// Bytes that are not UTF-8 (a folder named in Latin-1, a driver's device
// name) must not reach a message raw: each becomes "\xHH", so every message
// is valid UTF-8; well-formed characters are kept. escaped() agrees on all
// of these but the backslash.
struct Utf8Case {
  const char* what;
  std::string text;
  std::string expected;
};

const Utf8Case kUtf8Cases[] = {
    {"ASCII", "plain /tmp/cafe", "plain /tmp/cafe"},
    {"2-byte (U+00E9)", "caf\xc3\xa9", "caf\xc3\xa9"},
    {"3-byte (U+65E5)", "\xe6\x97\xa5", "\xe6\x97\xa5"},
    {"4-byte (U+1F680)", "\xf0\x9f\x9a\x80", "\xf0\x9f\x9a\x80"},
    {"Latin-1 byte", "/tmp/caf\xe9", "/tmp/caf\\xe9"},
    {"lone continuation byte", "a\x80z", "a\\x80z"},
    {"truncated 3-byte sequence", "\xe6\x97x", "\\xe6\\x97x"},
    {"truncated at the end", "ok\xf0\x9f\x9a", "ok\\xf0\\x9f\\x9a"},
    {"overlong '/'", "\xc0\xaf", "\\xc0\\xaf"},
    {"overlong 3-byte NUL", "\xe0\x80\x80", "\\xe0\\x80\\x80"},
    {"surrogate U+D800", "\xed\xa0\x80", "\\xed\\xa0\\x80"},
    {"past U+10FFFF", "\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80"},
    {"byte 0xff", "\xff", "\\xff"},
    {"C1 control (CSI) as UTF-8",
     "\xc2\x9b"
     "31m",
     "\\xc2\\x9b31m"},
    {"valid after invalid", "\xff\xc3\xa9", "\\xff\xc3\xa9"},
};

TEST(ControlsEscaped, KeepsWellFormedUtf8AndEscapesEveryOtherByte) {
  for (const Utf8Case& c : kUtf8Cases) {
    EXPECT_EQ(controls_escaped(c.text), c.expected) << c.what;
    EXPECT_EQ(escaped(c.text), c.expected) << c.what;
  }
}

TEST(Quoted, EscapesTheValueAndItsQuotes) {
  EXPECT_EQ(quoted("cpu"), "\"cpu\"");
  EXPECT_EQ(quoted("a\"b"), "\"a\\\"b\"");
  EXPECT_EQ(quoted("\x1b[31m\n"), "\"\\x1b[31m\\n\"");
}

}  // namespace
}  // namespace anydev::core
