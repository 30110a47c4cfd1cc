"""One resolver for every entry point (harness/resolver.py): each kind of folder a
student hands in, built with the real compilers, each program started and heard from;
one broken file costing only its programs; the lab building once, again when a source
changes; one clear line for what cannot be had."""

from __future__ import annotations

import os
import subprocess
import time

from harness.resolver import first_error, locate, prepare, resolve, run_here
from harness.sheets import programs


def write(folder, files: dict) -> str:
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return str(folder)


def says(argv: list[str], *args: str) -> str:
    """What the started program prints."""
    assert isinstance(argv, list), argv
    return subprocess.run(argv + list(args), capture_output=True, text=True, timeout=60).stdout.strip()


JAVA = {
    "Rdt.java": '// Lukas Novak s2199001\nclass Rdt { static String hello(String who) { return "hi " + who; } }\n',
    "Sender2.java": "/* Lukas Novak s2199001 */\npublic class Sender2 {\n  public static void main(String[] a) "
    "{ System.out.println(Rdt.hello(a[0])); }\n}\n",
    "Receiver2.java": 'public class Receiver2 { public static void main(String[] a) { System.out.println("rx"); } }\n',
}


def test_java_sources_without_a_build_file(tmp_path):
    folder = write(tmp_path / "java", JAVA)
    built = resolve(folder, ["Sender2", "Receiver2"], str(tmp_path / "out"))
    assert built.error is None
    assert says(built.programs["Sender2"], "there") == "hi there" and says(built.programs["Receiver2"]) == "rx"
    assert built.language("Sender2") == "java"


def test_one_java_file_that_does_not_compile_costs_only_its_program(tmp_path):
    folder = write(
        tmp_path / "java",
        {**JAVA, "Sender3.java": "public class Sender3 {\n  public static void main(String[] a) { int x = 1\n  }\n}\n"},
    )
    built = resolve(folder, ["Sender2", "Receiver2", "Sender3"], str(tmp_path / "out"))
    assert says(built.programs["Sender2"], "you") == "hi you" and says(built.programs["Receiver2"]) == "rx"
    why = built.programs["Sender3"]
    assert isinstance(why, str) and why == "Sender3 does not compile: Sender3.java:2: error: ';' expected", why
    assert "\n" not in why and str(tmp_path) not in why


def test_a_java_package_and_class_files_handed_in_alone(tmp_path):
    folder = write(
        tmp_path / "pkg",
        {
            "Sender2.java": "package comn.cw;\npublic class Sender2 { public static void "
            'main(String[] a) { System.out.println("pkg"); } }\n'
        },
    )
    assert says(resolve(folder, ["Sender2"], str(tmp_path / "out")).programs["Sender2"]) == "pkg"
    classes = tmp_path / "classes"
    classes.mkdir()
    write(tmp_path / "src", JAVA)
    subprocess.run(["javac", "-d", str(classes), *[str(tmp_path / "src" / f) for f in JAVA]], check=True)
    built = resolve(str(classes), ["Sender2"], str(tmp_path / "out2"))
    assert says(built.programs["Sender2"], "class") == "hi class"


C_RDT = {
    "rdt.h": "const char *hello(void);\n",
    "rdt.c": '#include "rdt.h"\nconst char *hello(void) { return "c"; }\n',
    "Sender2.c": '/* Hana Sato s2100001 */\n#include <stdio.h>\n#include "rdt.h"\n'
    'int main(int argc, char **argv) { printf("%s %s\\n", hello(), argv[1]); return 0; }\n',
    "Receiver2.cpp": '#include <iostream>\nint main() { std::cout << "c++" << std::endl; return 0; }\n',
}


def test_c_and_cpp_sources_link_the_folders_shared_code(tmp_path):
    folder = write(tmp_path / "c", {**C_RDT, "Sender3.c": "int main(void) { return undefined_thing; }\n"})
    built = resolve(folder, ["Sender2", "Receiver2", "Sender3"], str(tmp_path / "out"))
    assert says(built.programs["Sender2"], "x") == "c x" and says(built.programs["Receiver2"]) == "c++"
    assert built.programs["Sender3"].startswith("Sender3 does not compile: Sender3.c:1:"), built.programs["Sender3"]


def test_a_go_module_one_folder_per_program(tmp_path):
    folder = write(
        tmp_path / "go",
        {
            "go.mod": "module comn\n\ngo 1.19\n",
            "rdt/rdt.go": 'package rdt\n\nfunc Hello() string { return "go" }\n',
            "Sender2/main.go": '// Amara Okafor s2204417\npackage main\n\nimport (\n\t"fmt"\n'
            '\t"comn/rdt"\n)\n\nfunc main() { fmt.Println(rdt.Hello()) }\n',
        },
    )
    assert locate(folder, "Sender2") == "go.mod"
    assert says(resolve(folder, ["Sender2"], str(tmp_path / "out")).programs["Sender2"]) == "go"


def test_a_cargo_package_built_offline(tmp_path):
    folder = write(
        tmp_path / "rs",
        {
            "Cargo.toml": '[package]\nname = "comn"\nversion = "0.1.0"\nedition = "2021"\n',
            "src/bin/Sender2.rs": 'fn main() { println!("rust"); }\n',
        },
    )
    assert locate(folder, "Sender2") == "Cargo.toml"
    assert says(resolve(folder, ["Sender2"], str(tmp_path / "out")).programs["Sender2"]) == "rust"


def test_python_a_makefile_an_executable_and_what_is_missing(tmp_path):
    folder = write(
        tmp_path / "mixed",
        {
            "Sender2.py": "print('py')\n",
            "Makefile": "Receiver2:\n\tprintf '#!/bin/sh\\necho made\\n' > Receiver2 && chmod +x Receiver2\n",
            "Sender3": "#!/bin/sh\necho script\n",
            "Receiver3": "not executable\n",
        },
    )
    os.chmod(os.path.join(folder, "Sender3"), 0o755)
    built = resolve(folder, ["Sender2", "Receiver2", "Sender3", "Receiver3", "Sender4"], str(tmp_path / "out"))
    assert says(built.programs["Sender2"]) == "py" and built.language("Sender2") == "python"
    assert says(built.programs["Receiver2"]) == "made" and says(built.programs["Sender3"]) == "script"
    assert built.programs["Receiver3"].startswith("Receiver3 is not executable")
    assert built.programs["Sender4"].startswith(
        "Sender4 is missing from the submission (expected Sender4.py, Sender4.java, Sender4.c"
    )
    broken = write(tmp_path / "broken", {"Makefile": "all:\n\tfalse\n"})
    assert resolve(broken, ["Sender2"], str(tmp_path / "o")).programs["Sender2"].startswith("the build (make) failed")


def test_a_build_that_hangs_is_stopped_at_the_limit(tmp_path):
    folder = write(tmp_path / "slow", {"Makefile": "all:\n\tsleep 30\n"})
    began = time.monotonic()
    built = resolve(folder, ["Sender2"], str(tmp_path / "out"), run_here, time_limit=1)
    assert built.programs["Sender2"] == "the build (make) did not finish within 1 s"
    assert time.monotonic() - began < 10


def test_the_lab_builds_once_and_again_when_a_source_changes(tmp_path):
    folder = write(tmp_path / "lab", JAVA)
    first = prepare(folder, ["Sender2"])
    stamp = os.path.join(folder, ".rdtlab", "build", "resolved.json")
    made = os.stat(stamp).st_mtime_ns
    assert prepare(folder, ["Sender2"]).programs == first.programs and os.stat(stamp).st_mtime_ns == made
    time.sleep(0.01)
    (tmp_path / "lab" / "Rdt.java").write_text(JAVA["Rdt.java"].replace("hi ", "hello "))
    assert says(prepare(folder, ["Sender2"]).programs["Sender2"], "again") == "hello again"


def test_the_sheets_take_any_language_and_need_rdt_py_only_for_python(tmp_path):
    java = write(tmp_path / "java", JAVA)
    assert programs.missing(java, ("Sender2.py", "Receiver2.py", "rdt.py")) == []
    assert programs.missing(java, ("Sender3.py", "rdt.py")) == ["Sender3.py"]
    py = write(tmp_path / "py", {"Sender2.py": "", "Receiver2.py": ""})
    assert programs.missing(py, ("Sender2.py", "Receiver2.py", "rdt.py")) == ["rdt.py"]
    command = programs.script(java, "Sender2.py", "{receiver_host} {file}").command
    assert command.startswith("java ") and command.endswith(" Sender2 {receiver_host} {file}")
    assert programs.script(py, "Sender2.py", "{file}").command == f"python3 {py}/Sender2.py {{file}}"


def test_a_compilers_first_error_is_one_line_with_its_place():
    rust = "warning: unused\nerror[E0425]: cannot find value `x` in this scope\n --> src/bin/Sender2.rs:3:5\n"
    assert first_error(rust, "/f") == "error[E0425]: cannot find value `x` in this scope --> src/bin/Sender2.rs:3:5"
    go = "# comn/Sender2\n/f/Sender2/main.go:7:2: undefined: y\n"
    assert first_error(go, "/f") == "Sender2/main.go:7:2: undefined: y"
