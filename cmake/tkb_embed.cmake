# tkb_embed.cmake - writes a C file defining `const char SYM[]`, the bytes of IN and a
# NUL: OpenCL sources (and src/core/philox.h) embedded into the binaries that compile
# them at run time. A byte array rather than a string literal, whose length -Wpedantic
# caps at 4095.   cmake -DIN=<file> -DOUT=<file.c> -DSYM=<name> -P tkb_embed.cmake
file(READ "${IN}" hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
# a line break every 16 bytes keeps the generated file readable by tools
string(REGEX REPLACE "((0x..,){16})" "\\1\n  " bytes "${bytes}")
file(WRITE "${OUT}"
  "/* Generated from ${IN} by cmake/tkb_embed.cmake; do not edit. */\n"
  "extern const char ${SYM}[];\n"
  "const char ${SYM}[] = {\n  ${bytes}0x00};\n")
