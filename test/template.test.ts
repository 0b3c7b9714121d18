import { describe, expect, it } from "vitest";
import { defaultTemplate, renderTemplate, templateProblems } from "../src/lib/template";

const values = { code: "123456", app_name: "Acme" };

describe("templateProblems", () => {
  it.each([
    "{{code}}",
    "{code}",
    "{{ code }}",
    "{ code }",
    "{{  code\t}}",
    "Your {{app_name}} code: {{code}}",
    "Your {app_name} code: {code}",
    "Your { app_name } code: {{ code }}",
    "{{code}} and again {code}",
  ])("accepts %j", (template) => {
    expect(templateProblems(template)).toEqual([]);
  });

  it("requires the code placeholder", () => {
    expect(templateProblems("Welcome to {{app_name}}")).toEqual([
      "must contain the code placeholder {{code}}",
    ]);
    expect(templateProblems("code")).toEqual(["must contain the code placeholder {{code}}"]);
  });

  it("names each unknown placeholder, in both syntaxes", () => {
    expect(templateProblems("{{code}} {{ otp }} {name} {CODE} {}")).toEqual([
      "unknown placeholder {{ otp }}: use {{code}} or {{app_name}}",
      "unknown placeholder {name}: use {{code}} or {{app_name}}",
      "unknown placeholder {CODE}: use {{code}} or {{app_name}}",
      "unknown placeholder {}: use {{code}} or {{app_name}}",
    ]);
  });

  it("reports stray braces with their position", () => {
    expect(templateProblems("{{code}")).toEqual([
      'unmatched "{" at position 0: braces are reserved for placeholders',
    ]);
    expect(templateProblems("{{code}} :}")).toEqual([
      'unmatched "}" at position 10: braces are reserved for placeholders',
    ]);
    expect(templateProblems("{{{code}}}")).toEqual([
      'unmatched "{" at position 0: braces are reserved for placeholders',
      'unmatched "}" at position 9: braces are reserved for placeholders',
    ]);
  });

  it("reports every problem at once", () => {
    expect(templateProblems("{x} }")).toEqual([
      "unknown placeholder {x}: use {{code}} or {{app_name}}",
      'unmatched "}" at position 4: braces are reserved for placeholders',
      "must contain the code placeholder {{code}}",
    ]);
  });
});

describe("renderTemplate", () => {
  it("substitutes both syntaxes, with and without spaces", () => {
    expect(renderTemplate("{{code}}|{code}|{{ code }}|{ code }", values)).toBe("123456|123456|123456|123456");
    expect(renderTemplate("{{app_name}}|{app_name}|{{ app_name }}|{ app_name }", values)).toBe(
      "Acme|Acme|Acme|Acme",
    );
    expect(renderTemplate("Your {app_name} code is {{ code }}.", values)).toBe("Your Acme code is 123456.");
  });

  it("does not rescan substituted values", () => {
    expect(renderTemplate("{{app_name}}: {{code}}", { code: "42", app_name: "{code} $& $1" })).toBe(
      "{code} $& $1: 42",
    );
  });

  it("leaves anything else as written", () => {
    expect(renderTemplate("{{code}} {other}", values)).toBe("123456 {other}");
  });
});

describe("defaultTemplate", () => {
  it("writes the name in beside the code placeholder", () => {
    const template = defaultTemplate("Acme");
    expect(template).toBe("{{code}} is your Acme verification code. Do not share it.");
    expect(templateProblems(template)).toEqual([]);
    expect(renderTemplate(template, values)).toBe("123456 is your Acme verification code. Do not share it.");
  });

  it("strips braces from the name so that it cannot form placeholders", () => {
    for (const name of ["Acme {code}", "{{app_name}}", "Bad }{ name", "{x}"]) {
      const template = defaultTemplate(name);
      expect(templateProblems(template)).toEqual([]);
      expect(renderTemplate(template, values).match(/123456/g)).toHaveLength(1);
    }
    expect(defaultTemplate("Acme {beta}")).toBe(
      "{{code}} is your Acme beta verification code. Do not share it.",
    );
  });

  it("falls back to a name-less text when nothing of the name is left", () => {
    expect(defaultTemplate("{}")).toBe("{{code}} is your verification code. Do not share it.");
  });
});
