// The aws endpoint is stored in state and printed in fix commands: it must be a whole, plain URL.
import { describe, expect, it } from "vitest";
import { provisionerConfigProblems } from "../../../provider/provisioners/config/provisioner-config";

const problems = (endpoint: unknown) =>
  provisionerConfigProblems({ kind: "aws", region: "us-east-1", endpoint }).map((p) => p.property);

describe("the aws endpoint", () => {
  it.each([
    "https://ec2.us-east-1.amazonaws.com",
    "http://127.0.0.1:4566",
    "https://vpce-0abc.ec2.us-east-1.vpce.amazonaws.com/",
    "http://localhost:5000/ec2",
  ])("accepts %s", (endpoint) => {
    expect(problems(endpoint)).toEqual([]);
  });

  it.each([
    "http://h/$(cmd)",
    "http://h/`id`",
    "http://h/x; rm -rf ~",
    "http://h/ x",
    "http://user:secret@h",
    "http://h?query=1",
    "http://h#frag",
    "ftp://h",
    "https://",
    "http://h:99999999",
    "https://ec2.amazonaws.com\nsecond line",
    42,
  ])("refuses %j", (endpoint) => {
    expect(problems(endpoint)).toEqual(["endpoint"]);
  });
});
