# (4) several queries under one budget, showing what remains, OpenDP 0.16 (Context API).
import opendp.prelude as dp

dp.enable_features("contrib")
context = dp.Context.compositor(
    data=df["age"].tolist(),
    privacy_unit=dp.unit_of(contributions=1),
    privacy_loss=dp.loss_of(epsilon=1.0),
    split_by_weights=[2, 1, 1],
)
mean = context.query().impute_constant(50.0).clamp((18.0, 90.0)).resize(2_000, constant=50.0)
print(mean.mean().laplace().release())
print(context.query().count().laplace().release())
print(context.remaining_privacy_loss())
