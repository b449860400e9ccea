// The one classification of provisioner errors: which failures are "no usable answer" (refresh and
// check must fail) and which are the platform's answer (drift).
import { describe, expect, it } from "vitest";
import { kubeFailure } from "../../../provider/kube/kube-errors";
import { noUsableAnswer } from "../../../provider/provisioners/factory/no-usable-answer";

/** An error shaped as the AWS SDK throws it. */
const ec2 = (code: string, status?: number) =>
  Object.assign(new Error(`injected ${code}`), {
    name: code,
    ...(status === undefined
      ? {}
      : { $metadata: { httpStatusCode: status }, $fault: status >= 500 ? "server" : "client" }),
  });
/** A Kubernetes client error with an HTTP status (0: no answer), as kubeFailure wraps it. */
const kube = (code: number) =>
  kubeFailure(
    "reading HostSubnet n1",
    code === 0
      ? Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:1"), {})
      : Object.assign(new Error("x"), { code, body: { reason: "R", message: "m" } }),
    { server: "https://k", context: "c" },
  );

describe("noUsableAnswer", () => {
  it.each([
    ["EC2 503 InternalError", ec2("InternalError", 503), /EC2 gave no usable answer \(503 InternalError\)/],
    ["EC2 throttling", ec2("RequestLimitExceeded", 503), /EC2 kept throttling/],
    ["EC2 AuthFailure", ec2("AuthFailure", 401), /refused the credentials or permission/],
    ["EC2 UnauthorizedOperation", ec2("UnauthorizedOperation", 403), /refused the credentials or permission/],
    ["expired credentials", ec2("ExpiredToken", 400), /refused the credentials/],
    ["no credentials", ec2("CredentialsProviderError"), /no AWS credentials/],
    [
      "a connection reset",
      Object.assign(new Error("socket hang up"), { code: "ECONNRESET" }),
      /no usable answer/,
    ],
    ["a timeout", Object.assign(new Error("timed out"), { name: "TimeoutError" }), /no usable answer/],
    [
      "an EC2 error wrapped by the provisioner",
      new Error("moving 10.0.0.5", { cause: ec2("InternalError", 500) }),
      /EC2/,
    ],
    ["an unreachable API server", kube(0), /could not be reached/],
    ["Kubernetes 401", kube(401), /refused the credentials or permission \(401\)/],
    ["Kubernetes 403", kube(403), /refused the credentials or permission \(403\)/],
    ["Kubernetes 429", kube(429), /no usable answer \(429\)/],
    ["Kubernetes 503", kube(503), /no usable answer \(503\)/],
  ])("%s: no usable answer", (_, err, why) => {
    expect(noUsableAnswer(err)).toMatch(why);
  });

  it.each([
    [
      "the address is not on the host",
      new Error("egress IP 10.0.0.5 is not assigned to host i-1 (interfaces: eni-1)"),
    ],
    ["the instance is gone", new Error("there is no EC2 instance i-1 in us-east-1 any more")],
    ["EC2 rejects a parameter", ec2("InvalidParameterValue", 400)],
    ["an EC2 answer wrapped", new Error("x", { cause: ec2("InvalidNetworkInterfaceID.NotFound", 400) })],
    ["Kubernetes 404", kube(404)],
    ["Kubernetes 409", kube(409)],
  ])("%s: an answer (drift, or the caller's own error)", (_, err) => {
    expect(noUsableAnswer(err)).toBeUndefined();
  });
});
