# js2c.awk - a script file as a C string constant: awk -v name=NAME -f js2c.awk FILE.js > FILE.c
# (the Makefile keeps harness/report/html_charts_js.c in step with html_charts.js)
BEGIN { printf "/* %s.c - generated from the .js file of the same stem by js2c.awk: edit that file */\n", name
        printf "const char %s[] =\n", name }
{ gsub(/\\/, "&&"); gsub(/"/, "\\\\&"); printf "  \"%s\\n\"\n", $0 }
END { print ";" }
